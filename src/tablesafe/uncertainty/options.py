"""The contribution-level audit's options, checked once where a run enters
(:func:`tablesafe.protect`, :func:`tablesafe.protect_problem`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tablesafe.errors import InputError
from tablesafe.uncertainty.knowledge import KnowledgeModel
from tablesafe.uncertainty.needs import SIDES, TWO_SIDED
from tablesafe.validation import BOOLEAN, NONE, Constraints, Interval, OneOf, check_options

PERCENT = Interval(0.0, closed="right")
"""A positive percentage."""

CONSTRAINTS: Constraints = {
    "uncertainty": [BOOLEAN],
    "uncertainty_p": [PERCENT, NONE],
    "uncertainty_side": [OneOf(SIDES)],
    "midpoint_q": [PERCENT, NONE],
}
"""The contribution-level audit's options (the knowledge model's: :data:`tablesafe.uncertainty.knowledge.CONSTRAINTS`)."""


@dataclass(frozen=True)
class UncertaintyOptions:
    """What the contribution-level audit of a run applies.

    Attributes:
        enabled: whether the run audits contributions (the other options are recorded either way).
        p: the p% rule's p (None: the p of the run's p% rule).
        coalition: respondents pooling their contributions (None: the p% rule's n, else 1).
        side: ``two-sided`` or ``sliding`` protection.
        q: the midpoint attack's closeness in percent (None: p).
        knowledge: the attacker's a priori knowledge.
    """

    enabled: bool = True
    p: float | None = None
    coalition: int | None = None
    side: str = TWO_SIDED
    q: float | None = None
    knowledge: KnowledgeModel = field(default_factory=KnowledgeModel)

    @classmethod
    def build(cls, uncertainty: bool = False, uncertainty_p: Any = None, uncertainty_side: str = TWO_SIDED,
              midpoint_q: Any = None, knowledge_kx: Any = 2.0, knowledge_kx_low: Any = 0.0,
              knowledge_kw: Any = 1.0) -> UncertaintyOptions:
        """The options checked (``enabled`` False when no contribution-level audit is asked for).

        Args:
            uncertainty: run the contribution-level audit: for every sensitive cell and
                attacker, the uncertainty interval of the largest contribution that the
                publication leaves, whatever the method.
            uncertainty_p: its p (default: the p of the run's p% rule).
            uncertainty_side: the location rule, ``two-sided`` or ``sliding``.
            midpoint_q: the closeness in percent that flags the midpoint attack (default: p).
            knowledge_kx, knowledge_kx_low, knowledge_kw: the attacker's knowledge model:
                other respondents' contributions ``x`` within ``[kx_low*x, kx*x]``,
                sampling weights ``w > 1`` within ``[1, kw*w]``.
        """
        check_options({"uncertainty": uncertainty, "uncertainty_p": uncertainty_p,
                       "uncertainty_side": uncertainty_side, "midpoint_q": midpoint_q}, CONSTRAINTS, error=InputError)
        knowledge = KnowledgeModel.build(knowledge_kx, knowledge_kx_low, knowledge_kw)
        return cls(enabled=bool(uncertainty), p=None if uncertainty_p is None else float(uncertainty_p),
                   side=uncertainty_side, q=None if midpoint_q is None else float(midpoint_q), knowledge=knowledge)

    def recorded(self) -> dict[str, Any]:
        """The options as the run's parameters record them."""
        k = self.knowledge
        return {"uncertainty": self.enabled, "uncertainty_p": self.p, "uncertainty_side": self.side,
                "midpoint_q": self.q, "knowledge_kx": k.kx, "knowledge_kx_low": k.kx_low, "knowledge_kw": k.kw}

    def settled(self, assessment: Any) -> tuple[float, int]:
        """``(p, coalition)`` for a problem: as given, else from its p% rule."""
        percent = getattr(assessment, "percent", None)
        p = self.p if self.p is not None else (percent[0] if percent else None)
        if p is None:
            raise InputError("the contribution-level audit needs the p of a p% rule: the run has none, so give "
                             "uncertainty_p (--uncertainty-p)")
        coalition = self.coalition if self.coalition is not None else (percent[1] if percent else 1)
        return float(p), int(coalition)
