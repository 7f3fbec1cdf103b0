"""What an attacker really learns about a contribution: uncertainty intervals (seed 004).

- :mod:`~tablesafe.uncertainty.interval`: interval arithmetic (:class:`Intervals`);
- :mod:`~tablesafe.uncertainty.knowledge`: knowledge models (:class:`KnowledgeModel`);
- :mod:`~tablesafe.uncertainty.needs`: sliding and two-sided protection, the midpoint
  attack, rounded totals and rounded percentages;
- :mod:`~tablesafe.uncertainty.published`: what a publication tells about each total;
- :mod:`~tablesafe.uncertainty.contributions`: the contribution-level audit.
"""

from tablesafe.uncertainty.contributions import ContributionAudit, contribution_audit
from tablesafe.uncertainty.interval import Intervals
from tablesafe.uncertainty.knowledge import KnowledgeModel
from tablesafe.uncertainty.needs import (
    SIDES,
    SLIDING,
    TWO_SIDED,
    Needs,
    conventional_round,
    expected_rounding_error,
    midpoint_close,
    midpoint_error,
    needs,
    rounded_interval,
    rounded_percentage_needs,
    rounded_total_needs,
)
from tablesafe.uncertainty.published import PublishedTotals, publication_totals

__all__ = [
    "SIDES", "SLIDING", "TWO_SIDED", "ContributionAudit", "Intervals", "KnowledgeModel", "Needs",
    "PublishedTotals", "contribution_audit", "conventional_round", "expected_rounding_error",
    "midpoint_close", "midpoint_error", "needs", "publication_totals", "rounded_interval",
    "rounded_percentage_needs", "rounded_total_needs",
]
