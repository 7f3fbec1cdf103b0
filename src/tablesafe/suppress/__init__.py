"""Secondary cell suppression: optimal (Fischetti-Salazar), modular (HiTaS), fast, none.

Entry point: :func:`suppress`. Every method ends with the full audit, repair and cleanup.
"""

from tablesafe.suppress.dispatch import METHODS, suppress

__all__ = ["METHODS", "suppress"]
