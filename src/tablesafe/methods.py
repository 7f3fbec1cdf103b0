"""Every protection method a run may name: the suppression methods
(:mod:`tablesafe.suppress.methods`) and the adjustment methods
(:mod:`tablesafe.adjust.methods`), joined once here for the Python API, the command
line's ``--method`` choices and job files.
"""

from __future__ import annotations

from tablesafe.adjust.methods import ADJUST_METHODS, ADJUST_REGISTRY
from tablesafe.errors import InputError
from tablesafe.suppress.methods import REGISTRY, MethodInfo

ALL_REGISTRY: tuple[MethodInfo, ...] = REGISTRY + ADJUST_REGISTRY
"""Suppression methods first, then adjustment methods."""

ALL_METHODS: tuple[str, ...] = tuple(m.name for m in ALL_REGISTRY)
"""The names of :data:`ALL_REGISTRY`."""


def check_any_method(method: object, *, file: str | None = None) -> str:
    """The method name, checked against both registries.

    Raises:
        InputError: naming the unknown method, the known ones and the ``file`` (a job
            file) that asked for it.
    """
    if method not in ALL_METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(ALL_METHODS)}", file=file)
    return str(method)


def is_adjustment(method: str) -> bool:
    """Whether ``method`` publishes adjusted values (CTA, rounding) rather than withholding cells."""
    return method in ADJUST_METHODS
