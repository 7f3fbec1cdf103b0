"""Which method ``auto`` runs on a problem under a time limit, and the automatic limit:
:func:`choose_method`, :func:`auto_time_limit`.

The choice reads the problem (structure, dimensions, depth of the hierarchies, size,
sensitive cells) and the limit, never the clock, so the same input and limit give the
same method on any machine.
"""

from __future__ import annotations

import numpy as np

from tablesafe.problem import Problem
from tablesafe.suppress.repair_estimate import LP_REPAIR_MAX_CELLS

MODULAR_MAX_CELLS = 60_000
"""``auto`` picks ``modular`` on hierarchical tables up to this size, ``fast`` above it
(two-way tables: up to ``MODULAR_MAX_CELLS_TWO_WAY``)."""
MODULAR_MAX_CELLS_TWO_WAY = 70_000
"""Two-way tables get ``modular`` up to this size. Measured on the generated 61,215-cell
two-way table with holdings (``60k2d``): ``modular`` with the audit-guided repair ran
555 s (automatic limit 900 s; 774 s before its later audits were made incremental) and
withheld 26.0 M, ``fast`` 15 s and 247.4 M (tau-ARGUS MOD 11.9 M, OPT 15.2 M). Not higher until larger
tables are measured: the automatic limit stops at 900 s, and ``modular``'s time grows with the table."""


MODULAR_MAX_CELLS_NESTED = 10_000
"""Tables of three or more dimensions of which at least one has a hierarchy of two or
more levels get ``modular`` up to this size, ``fast`` above it. Measured with
``suppress(problem, "auto")`` against ``suppress(problem, "fast")`` on generated three-way
tables with holdings (twenty-first session, benchmarks/RESULTS.md): ``fast`` withheld
3-18 % less and took less time on every such table of more than 10,000 cells (the
13,851-cell preset with seeds 1-3, a 12,180-cell table of other fan-outs), where
``modular``'s subtables leave much of its pattern to the certificates; ``modular``
withheld less on the 1,872-cell preset (16 %) and an 8,208-cell table of three-level
hierarchies (4 %). Tables whose dimensions all have one level keep ``modular`` up to
``MODULAR_MAX_CELLS`` (its one subtable is the whole table; on a 9,261-cell one it
withheld 24 % less, and ``fast`` ran past 15 minutes on a 14,976-cell one)."""


MODULAR_SECONDS_PER_TARGET = 0.04
"""On tables of three or more dimensions ``auto`` picks ``fast`` instead of ``modular``
when the time limit is less than this many seconds per sensitive cell: ``modular`` cut
short by its limit leaves subtables to hurried certificates and withholds far more than
``fast`` in the same time. Measured (sixty-fifth session, ``suppress(problem, method,
time_limit=T)``, two workers; ``modular`` against ``fast``): the flat 7,462-cell three-way
table ``wide3d`` (2,395 sensitive) at 30 s 87.4 M against 3.3-71.6 M (four runs;
``fast`` there ends near the limit, its chains decided by the clock); the random three-way
``rand313`` (7,136 cells, 1,573 sensitive) at 10 s 106-124 M against 60.0 M, at 60 s
(``modular`` then ends in 22 s) 51.1 M against 53.2 M; the flat four-way ``rand317``
(2,160 cells, 567 sensitive) at 10 s 0.96-1.00 bn against 0.26 bn, at 30 s 781 M against
230 M. Kept ``modular`` by it: the 1,872-cell three-way preset (340 sensitive) at 25 s
(7.43 M against 8.19 M; ``modular`` ends in 14 s) and the random three-way ``rand320``
(1,664 cells, 138 sensitive) at 10 s (18.2 M against 21.9 M). Two-way tables keep
``modular`` under any limit: the 13,167-cell preset at 10 s withheld 6.0 M against 60.5 M
for ``fast``, at 5 s 55.4 M against 64.5 M."""

MODULAR_MAX_DIMS = 3
"""Tables of more dimensions than this get ``fast`` whatever their size. Measured at the
automatic limit (sixty-fifth session, ``suppress(problem, method)``, two workers;
``modular`` against ``fast``): the random four-way tables ``rand316`` (3,150 cells)
257.3 M against 214.0 M and ``rand328`` (6,480 cells) 18.39 M in 180 s against 11.45 M
in 167 s; the four-way tables one level deep everywhere ``rand317`` (2,160 cells) 203.2 M
against 197.0 M, 6 x 5 x 4 x 5 codes (1,260 cells) 5.92 M against 4.67 M, 8 x 6 x 5 x 4
codes (1,890 cells) 3.97 M against 3.24 M; the 1,296-cell four-way preset ``4d``
7.87 M in 39.5 s against 8.04 M in 12.4 s (the one table where ``modular`` withheld less).
``modular`` ran into its limit on all but ``4d``. Three-way tables one level deep keep
``modular`` (there ``fast`` withheld 16 times as much on a 9,261-cell one,
benchmarks/RESULTS.md). Linked tables count each table's own dimensions: the generated
linked pair of two three-way tables over four dimensions (``linked3k``, 2,736 cells) keeps
``modular``, which withheld 11.86 M in 19.7 s there against 12.43 M in 30.2 s for
``fast``."""


def _widest_table(problem: Problem) -> int:
    """Dimensions of the problem's table with the most (linked tables each on its own:
    the dimensions along which its cells vary)."""
    model = problem.model
    if model is None:
        return 0
    if len(model.table_cells) <= 1:
        return len(model.dims)
    return max(int((model.codes.iloc[np.asarray(cells)].nunique() > 1).sum()) for cells in model.table_cells)


def choose_method(problem: Problem, time_limit: float | None = None) -> tuple[str, str]:
    """The method ``auto`` runs on a problem under ``time_limit`` (seconds; None: the
    automatic one), and why (shown in the stats and the report). The choice depends on
    the problem and the limit only, never on the clock."""
    if not problem.structured:
        if problem.n <= LP_REPAIR_MAX_CELLS:
            return "optimal", "no table structure (relations only): cut generation on the whole table"
        return "fast", f"no table structure and more than {LP_REPAIR_MAX_CELLS:,} cells: local certificates"
    dims = len(problem.model.dims) if problem.model is not None else 0
    two_way = problem.model is not None and dims <= 2
    nested = problem.model is not None and any(int(np.max(d.hierarchy.depths)) > 1 for d in problem.model.dims)
    widest = _widest_table(problem)
    if widest > MODULAR_MAX_DIMS:
        return "fast", f"{widest} dimensions (more than {MODULAR_MAX_DIMS}): local certificates"
    if not two_way and nested and problem.n > MODULAR_MAX_CELLS_NESTED:
        return "fast", (f"{problem.n:,} cells in three or more dimensions with nested hierarchies (more than "
                        f"{MODULAR_MAX_CELLS_NESTED:,}): local certificates")
    most = MODULAR_MAX_CELLS_TWO_WAY if two_way else MODULAR_MAX_CELLS
    if problem.n > most:
        return "fast", f"{problem.n:,} cells (more than {most:,}): local certificates"
    limit = auto_time_limit(problem.n) if time_limit is None else float(time_limit)
    targets = int(problem.sensitive.sum())
    if not two_way and limit < MODULAR_SECONDS_PER_TARGET * targets:
        return "fast", (f"a time limit of {limit:g} s is short for HiTaS subtables of {targets:,} sensitive cells "
                        f"in three or more dimensions (less than {MODULAR_SECONDS_PER_TARGET:g} s each): "
                        "local certificates")
    return "modular", (f"table structure with {problem.n:,} cells (up to {most:,}"
                       f"{' for two-way tables' if two_way else ''}): HiTaS subtables, each solved exactly")


def auto_time_limit(cells: int) -> float:
    """The time limit used when none is given: 60 s plus 20 s per 1,000 cells, at most
    15 minutes (a 2,000-cell table gets 100 s, a 13,000-cell one 320 s)."""
    return float(min(60.0 + 0.02 * cells, 900.0))
