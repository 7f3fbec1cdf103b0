"""The options of an adjustment run, checked once where the run enters.

:meth:`AdjustOptions.build` takes the options as the Python API, the command line and job
files give them (``rounding_base``, ``readd_totals``, ``cta_cost``, ``cta_directions``,
``fix_totals``) and refuses a bad one with an :class:`~tablesafe.InputError` naming it.
Nothing downstream checks them again.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablesafe.adjust.methods import ADJUST_METHODS, CTA, RANDOM_ROUND, ROUND
from tablesafe.errors import InputError

CTA_COSTS = ("weighted", "l1", "relative")
"""What CTA minimises: ``weighted`` (sum of absolute deviations weighted by 1/value, the
LP-based CTA of seed 003 B.3; the default), ``l1`` (plain sum of absolute deviations) and
``relative`` (the largest relative change of a cell, the minimum percent deviation of
seed 003's simplified CTA, ties broken by the weighted sum)."""

CTA_DIRECTIONS = ("auto", "optimal", "alternating")
"""How CTA chooses the direction of each sensitive cell: ``optimal`` (a MILP with a binary
per sensitive cell), ``alternating`` (seed 003 B.3's heuristic: largest cell first,
directions alternating, then one LP) and ``auto`` (optimal up to :data:`MILP_MAX_CELLS`
cells, alternating above)."""

MILP_MAX_CELLS = 20_000
"""The largest table ``cta_directions="auto"`` gives to the MILP."""

FIX_WORDS = ("none", "grand", "all")
"""``fix_totals`` as one word: no total kept, the grand total kept, every total kept."""


@dataclass(frozen=True)
class FixTotals:
    """Which totals an adjustment keeps at their true values.

    Attributes:
        word: ``none``, ``grand`` or ``all``; ``"depths"`` when ``depths`` says it.
        depths: per dimension name, the deepest level whose totals are kept (0: the
            dimension's total code only).
    """

    word: str = "none"
    depths: tuple[tuple[str, int], ...] = ()

    def __str__(self) -> str:
        if self.word != "depths":
            return self.word
        return ", ".join(f"{d}={k}" for d, k in self.depths)


@dataclass(frozen=True)
class AdjustOptions:
    """The checked options of one adjustment run.

    Attributes:
        method: ``cta``, ``round`` or ``random-round``.
        cost: CTA's objective (:data:`CTA_COSTS`).
        directions: CTA's choice of directions (:data:`CTA_DIRECTIONS`).
        fix_totals: the totals CTA keeps (:class:`FixTotals`).
        base: the rounding base (rounding methods).
        readd_totals: random rounding: round the interior cells, then add the totals up
            from them (an additive table).
        time_limit: seconds for the method's solver (None: set from the table size).
        seed: the seed of random rounding.
    """

    method: str
    cost: str = "weighted"
    directions: str = "auto"
    fix_totals: FixTotals = FixTotals()
    base: float | None = None
    readd_totals: bool = False
    time_limit: float | None = None
    seed: int = 0

    @classmethod
    def build(
        cls,
        method: str,
        *,
        rounding_base: Any = None,
        readd_totals: bool = False,
        cta_cost: str = "weighted",
        cta_directions: str = "auto",
        fix_totals: Any = "none",
        time_limit: float | None = None,
        seed: int = 0,
    ) -> AdjustOptions:
        """Check the options as given and return them.

        Raises:
            InputError: naming the option at fault and its accepted values.
        """
        if method not in ADJUST_METHODS:
            raise InputError(f"{method!r} is not an adjustment method; choose one of {', '.join(ADJUST_METHODS)}")
        if cta_cost not in CTA_COSTS:
            raise InputError(f"cta_cost (--cta-cost) must be one of {', '.join(CTA_COSTS)}, not {cta_cost!r}")
        if cta_directions not in CTA_DIRECTIONS:
            raise InputError(
                f"cta_directions (--cta-directions) must be one of {', '.join(CTA_DIRECTIONS)}, not {cta_directions!r}"
            )
        base = _base(rounding_base, needed=method in (ROUND, RANDOM_ROUND), method=method)
        if readd_totals not in (True, False):
            raise InputError(f"readd_totals (--readd-totals) is a flag (true or false), not {readd_totals!r}")
        if readd_totals and method != RANDOM_ROUND:
            raise InputError(f"readd_totals (--readd-totals) applies to method random-round, not {method}")
        fix = parse_fix_totals(fix_totals)
        if fix.word != "none" and method != CTA:
            raise InputError(f"fix_totals (--fix-totals) applies to method cta, not {method}")
        return cls(method=method, cost=cta_cost, directions=cta_directions, fix_totals=fix, base=base,
                   readd_totals=bool(readd_totals), time_limit=time_limit, seed=int(seed))


def _base(value: Any, *, needed: bool, method: str) -> float | None:
    """The rounding base: a positive finite number, required by the rounding methods."""
    if value is None:
        if needed:
            raise InputError(f"method {method} needs a rounding base: give rounding_base (--rounding-base B), e.g. 5")
        return None
    base = positive_base(value)
    if not needed:
        raise InputError(f"rounding_base (--rounding-base) applies to methods round and random-round, not {method}")
    return base


def positive_base(value: Any) -> float:
    """``rounding_base`` as given, checked: a positive finite number (or its text).

    Raises:
        InputError: anything else, naming the option.
    """
    bad = InputError(f"rounding_base (--rounding-base) must be a positive number, not {value!r}")
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise bad
    try:
        base = float(value)
    except ValueError:
        raise bad from None
    if not (math.isfinite(base) and base > 0):
        raise bad
    return base


def parse_fix_totals(value: Any) -> FixTotals:
    """``fix_totals`` as given: ``none``, ``grand``, ``all``, ``"DIM=DEPTH"`` (several
    separated by commas, or a list of them) or a mapping ``{dimension: depth}``.

    Raises:
        InputError: anything else, naming the option and the accepted forms.
    """
    if value is None:
        return FixTotals()
    if isinstance(value, str) and value.strip() in FIX_WORDS:
        return FixTotals(value.strip())
    items: Sequence[Any]
    if isinstance(value, Mapping):
        items = [f"{k}={v}" for k, v in value.items()]
    elif isinstance(value, str):
        items = [s for s in value.split(",") if s.strip()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    if len(items) == 1 and str(items[0]).strip() in FIX_WORDS:
        return FixTotals(str(items[0]).strip())
    depths = []
    for item in items:
        name, eq, depth = str(item).partition("=")
        if not eq or not name.strip() or not depth.strip().isdigit():
            raise InputError(
                f"fix_totals (--fix-totals) must be none, grand, all or DIMENSION=DEPTH (e.g. region=1), not {item!r}"
            )
        depths.append((name.strip(), int(depth)))
    if not depths:
        return FixTotals()
    return FixTotals("depths", tuple(depths))
