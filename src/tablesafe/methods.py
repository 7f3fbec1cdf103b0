"""Every protection method a run may name: the suppression methods
(:mod:`tablesafe.suppress.methods`), the adjustment methods
(:mod:`tablesafe.adjust.methods`), interval publication
(:mod:`tablesafe.interval_publication`) and noise (:mod:`tablesafe.noise`), joined once here for the Python API, the command
line's ``--method`` choices and job files.
"""

from __future__ import annotations

from tablesafe.adjust.methods import ADJUST_METHODS, ADJUST_REGISTRY
from tablesafe.interval_publication import INTERVAL_REGISTRY
from tablesafe.noise import NOISE_REGISTRY
from tablesafe.suppress.methods import REGISTRY, MethodInfo, check_method

ALL_REGISTRY: tuple[MethodInfo, ...] = REGISTRY + ADJUST_REGISTRY + INTERVAL_REGISTRY + NOISE_REGISTRY
"""Suppression methods first, then adjustment methods, interval publication, noise."""

ALL_METHODS: tuple[str, ...] = tuple(m.name for m in ALL_REGISTRY)
"""The names of :data:`ALL_REGISTRY`."""


def check_any_method(method: object, *, file: str | None = None) -> str:
    """The method name, checked against both registries (an unknown one raises
    :class:`~tablesafe.InputError` naming the known ones and the job ``file``)."""
    return check_method(method, file=file, names=ALL_METHODS)


def is_adjustment(method: str) -> bool:
    """Whether ``method`` publishes adjusted values (CTA, rounding) rather than withholding cells."""
    return method in ADJUST_METHODS
