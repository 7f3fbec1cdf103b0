"""The registry of suppression methods: their names, what each does, and the one default.

Every entry reads the methods from here: the Python API (:func:`tablesafe.protect`), the
command line's ``--method`` choices, job files and :func:`tablesafe.suppress.suppress`.
A new method gets its entry here and its branch in :mod:`tablesafe.suppress.dispatch`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablesafe.errors import InputError


@dataclass(frozen=True)
class MethodInfo:
    """A suppression method as the user chooses it.

    Attributes:
        name: the name given to ``method=`` and ``--method``.
        summary: what it does, in one line (for help texts).
        safe: False for ``none`` (primary suppression only: no complements, no safety
            claim); True for the methods whose pattern is proved safe.
    """

    name: str
    summary: str
    safe: bool = True


NONE = "none"
"""Primary suppression only: the sensitive cells are withheld, nothing else."""

REGISTRY: tuple[MethodInfo, ...] = (
    MethodInfo("auto", "modular on hierarchical tables up to 60,000 cells (two-way: 70,000; "
                       "three or more dimensions with nested hierarchies: 10,000), fast above, "
                       "optimal without table structure"),
    MethodInfo("optimal", "Fischetti-Salazar cut generation (small and medium tables)"),
    MethodInfo("modular", "HiTaS: subtables top-down, each solved as one compact MIP"),
    MethodInfo("fast", "a local certificate per sensitive cell (large tables)"),
    MethodInfo(NONE, "primary suppression only (no safety claim)", safe=False),
)
"""Every suppression method, in the order help texts list them."""

METHODS: tuple[str, ...] = tuple(m.name for m in REGISTRY)
"""The names of :data:`REGISTRY`."""

DEFAULT_METHOD = "auto"
"""The method used when none is named (Python, command line and job files alike)."""


def check_method(method: object, *, file: str | None = None, names: tuple[str, ...] = METHODS) -> str:
    """The method name, checked against the registry (or the method ``names`` given:
    :mod:`tablesafe.methods` adds the adjustment methods).

    Raises:
        InputError: naming the unknown method, the known ones and the ``file`` (a job
            file) that asked for it.
    """
    if method not in names:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(names)}", file=file)
    return str(method)


def method_info(method: str) -> MethodInfo:
    """The registry entry of a method (checked: see :func:`check_method`)."""
    name = check_method(method)
    return next(m for m in REGISTRY if m.name == name)
