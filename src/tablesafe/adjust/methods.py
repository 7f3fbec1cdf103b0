"""The registry of adjustment methods: the names a user gives to ``method=`` or
``--method`` for a table published with changed values instead of withheld ones.

Suppression methods have their own registry (:mod:`tablesafe.suppress.methods`); both
are joined in :mod:`tablesafe.methods`, which every entry reads.
"""

from __future__ import annotations

from tablesafe.suppress.methods import MethodInfo

CTA = "cta"
"""Controlled tabular adjustment (seed 003 B.3)."""
ROUND = "round"
"""Controlled rounding to a base (seed 003 A.1)."""
RANDOM_ROUND = "random-round"
"""Unbiased random rounding to a base (seed 003 A, frequency tables)."""

ADJUST_REGISTRY: tuple[MethodInfo, ...] = (
    MethodInfo(CTA, "controlled tabular adjustment: sensitive cells moved by their levels, "
                    "the table kept additive"),
    MethodInfo(ROUND, "controlled rounding to a base (--rounding-base), the table kept additive"),
    MethodInfo(RANDOM_ROUND, "unbiased random rounding to a base (frequency tables; "
                             "--readd-totals for additive totals)"),
)
"""Every adjustment method, in the order help texts list them."""

ADJUST_METHODS: tuple[str, ...] = tuple(m.name for m in ADJUST_REGISTRY)
"""The names of :data:`ADJUST_REGISTRY`."""
