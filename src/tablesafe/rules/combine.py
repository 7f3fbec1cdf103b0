"""Rules combined by OR: a cell is sensitive when any rule says so, and its protection
levels are the maximum over the rules that fire (the handbook's rule for several rules).

:func:`combine` evaluates every rule of a rule set on the same
:class:`~tablesafe.rules.view.ContributionView` and returns the :class:`RuleVerdicts`,
which the assessment (:mod:`tablesafe.rules.assess`) completes with statuses set by hand
and turns into a :class:`~tablesafe.Problem`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from tablesafe.errors import RuleError
from tablesafe.rules.directional import directional_levels
from tablesafe.rules.model import FreqRule, Rule
from tablesafe.rules.view import ContributionView

MAX_RULES = 62
"""The most rules the rule column can name (bits of an int64, one left for ``manual``)."""


@dataclass
class RuleVerdicts:
    """What the rules say about every cell (arrays with one entry per cell).

    Attributes:
        sensitive: cells some rule makes sensitive (empty cells never are).
        upl: the largest upper protection level of the rules that fire.
        lower: the largest rule-derived lower level of the rules that fire.
        slack: for linear measures, how far a safe cell may fall and stay safe under
            every one of them (the protection capacity); None without linear measures.
        fired_bits: bit ``j`` set where the rule labelled ``labels[j]`` fired.
        labels: the rules' strings (and ``manual`` when statuses were set by hand).
        fired: per rule string, how many cells it makes sensitive.
    """

    sensitive: np.ndarray
    upl: np.ndarray
    lower: np.ndarray
    slack: np.ndarray | None
    fired_bits: np.ndarray
    labels: list[str]
    fired: dict[str, int]

    def label(self, name: str) -> int:
        """Add a label and return its bit."""
        self.labels.append(name)
        return 1 << (len(self.labels) - 1)

    def add_directional_levels(self, rules: Sequence[Rule], view: ContributionView,
                               relations: sp.spmatrix) -> None:
        """Raise the levels of cells under a frequency rule to the direction-wise levels
        (:mod:`tablesafe.rules.directional`)."""
        for r in rules:
            if isinstance(r, FreqRule):
                fmask = view.nonempty & (view.count < r.n - 1e-9)
                extra = directional_levels(relations, view.value, view.count, fmask, r.n)
                self.upl = np.where(fmask, np.maximum(self.upl, extra), self.upl)

    def exempt(self, mask: np.ndarray) -> None:
        """No rule makes the cells of ``mask`` sensitive (missing codes that are safe)."""
        self.sensitive &= ~mask
        self.fired_bits = np.where(mask, 0, self.fired_bits)

    def rule_column(self, shown: np.ndarray) -> np.ndarray:
        """Per cell, the labels that fired joined with ``|`` (empty outside ``shown``)."""
        bits = np.where(shown, self.fired_bits, 0)
        combos, inverse = np.unique(bits, return_inverse=True)
        words = np.array(
            ["|".join(lab for j, lab in enumerate(self.labels) if (int(c) >> j) & 1) for c in combos], dtype=object
        )
        return words[inverse.reshape(-1)]


def combine(rules: Sequence[Rule], view: ContributionView) -> RuleVerdicts:
    """Evaluate every rule on the view and combine them by OR (levels: the maximum)."""
    n = view.n
    out = RuleVerdicts(sensitive=np.zeros(n, dtype=bool), upl=np.zeros(n), lower=np.zeros(n), slack=None,
                       fired_bits=np.zeros(n, dtype=np.int64), labels=[], fired={})
    if len(rules) > MAX_RULES:
        raise RuleError(f"at most {MAX_RULES} rules can be combined")
    for r in rules:
        res = r.evaluate(view)
        s = res.sensitive & view.nonempty
        out.fired[r.to_string()] = int(s.sum())
        out.sensitive |= s
        out.upl = np.where(s, np.maximum(out.upl, res.upl), out.upl)
        out.lower = np.where(s, np.maximum(out.lower, res.lower), out.lower)
        if res.slack is not None:
            out.slack = res.slack if out.slack is None else np.minimum(out.slack, res.slack)
        out.fired_bits |= s.astype(np.int64) * out.label(r.to_string())
    return out
