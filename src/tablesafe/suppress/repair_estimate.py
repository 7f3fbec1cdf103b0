"""How long ``modular``'s attacker-LP repair is expected to take, and the route chosen
from it (issue 12).

On a three-way table a pattern's withheld cells often form one block of thousands of
cells, where each attacker's LP takes tens of milliseconds and every sensitive cell is
attacked at least twice (outsider, grouped single respondents). A repair that cannot
finish within the limit runs out of time and leaves the certificates that complete the
pattern only what is left; the estimate here sends such a pattern to the certificates
from the start. A two-way pattern whose block is that large goes to the audit-guided
repair instead (:data:`TWO_WAY_GUIDED_WORK`).
"""

from __future__ import annotations

import numpy as np

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Blocks

__all__ = ["LP_REPAIR_ESTIMATE_SHARE", "LP_REPAIR_MAX_CELLS", "LP_REPAIR_SECONDS_PER_UNIT", "TWO_WAY_GUIDED_WORK", "lp_repair_work",
           "repair_route"]

LP_REPAIR_MAX_CELLS = 5_000
"""Above this size every method's pattern (``modular``'s: above
``dispatch.MODULAR_LP_REPAIR_MAX_CELLS``) is repaired and proved by certificates (the
``fast`` search seeded with the pattern) instead of full-table attacker LPs. (A pattern
proved by certificates gets attacker LPs for its insider gaps on any size, while time is
left.) ``auto`` runs ``optimal`` on problems without table structure up to this size
(:func:`~tablesafe.suppress.method_choice.choose_method`)."""

LP_REPAIR_SECONDS_PER_UNIT = 4e-8
"""Seconds of the attacker-LP repair per unit of :func:`lp_repair_work` on tables of three
or more dimensions. Measured with ``suppress(problem, "auto")`` on generated tables with
holdings (forty-second session; two workers; repair seconds / work): the 1,872-cell
three-way tables of seeds 1 and 2 2.5 s / 1.7e8 and 12.3 s / 3.3e8, the 3,080-cell mixed
one 7.6 s / 3.0e8, the 3,328-cell sparse one 82.2 s / 1.2e9, and an irregular 4,340-cell
one (``benchmarks/irregular_shapes.py``) 241 s / 5.2e9: 1.5e-8 to 6.7e-8 per unit, this
is about their median. An attacker's LP on a block grows with about the square of the
block's cells, and each sensitive cell of the block is attacked at least twice."""

LP_REPAIR_ESTIMATE_SHARE = 0.5
"""``modular``'s pattern of a table of three or more dimensions goes to the local
certificates instead of the attacker-LP repair when that repair's estimate
(:func:`lp_repair_work` times :data:`LP_REPAIR_SECONDS_PER_UNIT`) is more than this share
of the time limit: it would run out of time, and the certificates completing the pattern
would get only what is left. They then hurry from the start, as after a repair out of
time (:func:`tablesafe.suppress.fast.fast_pattern`'s ``hurry``). The estimate is a
count, not a clock, so the route is the same in every run. Measured with
``suppress(problem, "auto")`` (forty-second session): on the irregular 4,340-cell
three-way table (``benchmarks/irregular_shapes.py``, automatic limit 147 s, estimate
210 s) the repair had run out of time after 86 s and the hurried certificates gave
14.8 M in 138 s; now 14.8 M in 66 s (unhurried: 12.7 M in 99 s; tau-ARGUS MOD 8.9 M in
49 s, 29 cells under-protected). With a 20 s limit: that table 16.3 M -> 15.4 M
(unhurried 49.0 M: the certificates' chains), the 3,328-cell sparse one 22.7 M ->
22.4 M, the 3,080-cell mixed one 8.59 M -> 9.48 M (its repair, estimated at 12.7 s,
had finished in 8 s); the 1,872-cell one (estimate 6.7 s) keeps its repair."""


def lp_repair_work(problem: Problem, withheld: np.ndarray) -> float:
    """Work of the attacker-LP repair's first check of ``withheld``: over the blocks of
    withheld cells linked by relations, each block's sensitive cells times the square of
    its size."""
    blocks = Blocks(problem.relations, withheld.astype(float))
    lab = blocks.label
    inside = lab >= 0
    if not inside.any():
        return 0.0
    size = np.bincount(lab[inside], minlength=blocks.count).astype(float)
    targets = np.bincount(lab[inside & problem.sensitive], minlength=blocks.count).astype(float)
    return float(np.sum(targets * size ** 2))


TWO_WAY_GUIDED_WORK = 3e10
"""``modular``'s pattern of a one- or two-way table whose :func:`lp_repair_work` is above
this goes to the audit-guided repair (:mod:`tablesafe.suppress.audit_repair`) instead of
the attacker-LP repair. Measured on unseen generated two-way tables with three-level
hierarchies (``benchmarks/unseen_tables.py``, forty-ninth session), whose subtables leave
one block of some 6,000 withheld cells with 4,500 sensitive ones: the 13,125-cell table
of seed 205 (work 1.6e11) took 177 s with the attacker-LP repair (128 s of it) and
withheld 14.27 M; its audit-guided repair takes 57 s (14.42 M). The generated tables
of the benchmarks stay below: 2k2d 3.7e7, 13k2d 2.0e9, the irregular and flat shapes
7e7-1.0e10 (irr2d_c 5.1e9, wide2d 1.0e10)."""


def repair_route(problem: Problem, method: str, route: str, found: np.ndarray, time_limit: float,
                 stats: dict, log, guided_ok: bool = True) -> str:
    """How ``method``'s pattern ``found`` is completed: ``route`` as chosen, but for
    ``modular``: ``"certificates"`` instead of ``"lp"`` on a table of three or more
    dimensions whose attacker-LP repair is estimated to take more than
    :data:`LP_REPAIR_ESTIMATE_SHARE` of the limit, and ``"guided"`` on a two-way table
    whose repair work is above :data:`TWO_WAY_GUIDED_WORK` (when ``guided_ok``: the
    audit-guided repair knows no capacity bounds). The estimate and the reason go into
    ``stats``."""
    if route != "lp" or method != "modular" or problem.model is None:
        return route
    if len(problem.model.dims) < 3:
        if not guided_ok:
            return route
        work = lp_repair_work(problem, found)
        if work <= TWO_WAY_GUIDED_WORK:
            return route
        stats["repair_chosen"] = (f"audit-guided repair: the withheld cells form blocks whose attacker LPs "
                                  f"would take long (work {work:.2g}, more than {TWO_WAY_GUIDED_WORK:.2g})")
        if log:
            log(stats["repair_chosen"])
        return "guided"
    estimate = LP_REPAIR_SECONDS_PER_UNIT * lp_repair_work(problem, found)
    stats["repair_estimate_seconds"] = estimate
    if estimate <= LP_REPAIR_ESTIMATE_SHARE * time_limit:
        return "lp"
    stats["repair_skipped"] = (f"attacker-LP repair estimated at {estimate:.0f} s, more than "
                               f"{LP_REPAIR_ESTIMATE_SHARE:.0%} of the {time_limit:.0f} s limit: "
                               "local certificates complete the pattern")
    if log:
        log(stats["repair_skipped"])
    return "certificates"
