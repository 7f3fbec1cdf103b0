"""Secondary cell suppression: optimal (Fischetti-Salazar), modular (HiTaS), fast, none.

Entry point: :func:`suppress`; the methods are listed in :mod:`tablesafe.suppress.methods`.
Every method ends with the full audit, repair and cleanup.
"""

from tablesafe.suppress.dispatch import suppress
from tablesafe.suppress.methods import DEFAULT_METHOD, METHODS, REGISTRY, MethodInfo, check_method

__all__ = ["DEFAULT_METHOD", "METHODS", "REGISTRY", "MethodInfo", "check_method", "suppress"]
