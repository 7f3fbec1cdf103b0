"""The rules of a run, read and checked once where the run enters: a :class:`RuleSet`.

Rule strings (``"p(15)|freq(3)"``, tau-ARGUS ``"P(15,1)|MAN(20)|WGT(1)"``) are parsed
here and nowhere downstream: the pipeline (:mod:`tablesafe.api`), the command line and
job files (through it) and tau-ARGUS batch files (:mod:`tablesafe.io.arb`) build a
``RuleSet`` and hand it on; tabulation reads its ``top_k``, the assessment its rules and
options. The tau-ARGUS options written among the rules (``WGT``, ``MIS``, ``MAN``) become
typed options of the set, not rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tablesafe.errors import InputError, RuleError
from tablesafe.rules.model import FreqRule, Rule, ZeroRule
from tablesafe.rules.parse import parse_rules
from tablesafe.rules.tauoptions import ManualRule, MissingOption, RuleOption, WeightOption
from tablesafe.validation import BOOLEAN, NON_NEGATIVE, NONE, Constraints, OneOf, check_options

WEIGHT_MODES = ("expand", "sample", "known")
"""How the rules use sampling weights (see :func:`tablesafe.rules.assess`)."""

DEFAULT_MANUAL_MARGIN = 10.0
"""Margin (percent of the value) of cells sensitive by hand without their own (tau-ARGUS)."""

RuleSpec = str | Rule | RuleOption | Iterable[str | Rule | RuleOption]
"""What a user may give as rules: strings, rule objects, or a list of them."""

CONSTRAINTS: Constraints = {
    "weight_mode": [OneOf(WEIGHT_MODES), NONE],
    "manual_margin": [NON_NEGATIVE],
    "missing_safe": [BOOLEAN],
    "zero_unsafe": [BOOLEAN, NON_NEGATIVE, NONE],
}
"""The allowed values of the rule set's options."""


def missing_codes_map(missing_codes: Any) -> dict[str, list[str]] | None:
    """The codes that stand for a missing value, per dimension, from a mapping
    ``{dimension: code or codes}`` (Python, a job file's table) or ``"dimension=code"``
    strings (``--missing-codes``, a job file's list); None when none are given.

    Raises:
        InputError: a string without ``=``, or an empty dimension name or code.
    """
    if not missing_codes:
        return None
    out: dict[str, list[str]] = {}
    if isinstance(missing_codes, Mapping):
        for dim, codes in missing_codes.items():
            out.setdefault(str(dim), []).extend([codes] if isinstance(codes, str) else [str(c) for c in codes])
        return out
    for item in [missing_codes] if isinstance(missing_codes, str) else missing_codes:
        dim, eq, code = str(item).partition("=")
        if not eq or not dim.strip() or not code.strip():
            raise InputError(f"missing codes are given as DIMENSION=CODE, not {item!r} (--missing-codes)")
        out.setdefault(dim.strip(), []).append(code.strip())
    return out


@dataclass(frozen=True)
class RuleSet:
    """Sensitivity rules with the options that say how they apply.

    A cell is sensitive when any rule says so; its levels are the maximum over the rules
    that fire. Build one with :meth:`build` (from strings and keyword options); the
    constructor checks the options (:data:`CONSTRAINTS`) and computes :attr:`top_k`.

    Attributes:
        rules: the sensitivity rules, in the order given (a zero rule asked for with
            ``zero_unsafe`` last).
        weight_mode: how the rules use sampling weights (:data:`WEIGHT_MODES`), or None:
            sampled contributions against the weighted total.
        manual_margin: margin (percent of the value) of cells sensitive by hand without
            their own.
        missing_codes: per dimension, the codes that stand for a missing value.
        missing_safe: cells with a missing code in any dimension are never sensitive by
            rule (tau-ARGUS ``MIS(1)``); needs ``missing_codes``.
        top_k: how many of the largest contributions per cell the rules need (at least
            1): ``n + 1`` for ``p``/``pq`` with ``n`` intruders, ``n`` for ``nk(n, k)``,
            one less than the weights of ``linear``, 2 for the request rule.
    """

    rules: tuple[Rule, ...] = ()
    weight_mode: str | None = None
    manual_margin: float = DEFAULT_MANUAL_MARGIN
    missing_codes: Mapping[str, tuple[str, ...]] | None = None
    missing_safe: bool = False
    top_k: int = field(init=False)

    def __post_init__(self) -> None:
        check_options(
            {"weight_mode": self.weight_mode, "manual_margin": self.manual_margin,
             "missing_safe": self.missing_safe},
            CONSTRAINTS, error=RuleError,
        )
        rules = tuple(self.rules)
        for r in rules:
            if not isinstance(r, Rule):
                raise RuleError(f"a rule set holds sensitivity rules, not {r!r}")
        object.__setattr__(self, "rules", rules)
        if self.missing_codes is not None:
            frozen = {str(d): tuple(str(c).strip() for c in codes) for d, codes in self.missing_codes.items()}
            object.__setattr__(self, "missing_codes", MappingProxyType(frozen))
        if self.missing_safe and not self.missing_codes:
            raise RuleError("missing codes are to be safe (MIS(1)), but no missing_codes were given")
        object.__setattr__(self, "top_k", max([r.needs_top for r in rules] + [1]))

    @classmethod
    def build(
        cls,
        rules: RuleSpec | RuleSet,
        *,
        weight_mode: str | None = None,
        zero_unsafe: float | bool | None = None,
        manual_margin: float | None = None,
        missing_codes: Any = None,
        missing_safe: bool | None = None,
    ) -> RuleSet:
        """Parse rules once and settle their options.

        Args:
            rules: rule strings or objects (see :func:`tablesafe.rules.parse_rules`),
                possibly with the tau-ARGUS options ``WGT(1)`` (weight mode ``expand``),
                ``MIS(0|1)`` (missing codes safe) and ``MAN(margin)``; or a rule set,
                whose options the keywords given override.
            weight_mode: overrides ``WGT(1)``.
            zero_unsafe: make zero cells (all contributions 0) sensitive with this
                absolute protection range (True means 0): the rule ``zero(range)``.
            manual_margin: overrides ``MAN(margin)`` (default 10).
            missing_codes: a mapping ``{dimension: code or codes}`` or
                ``"dimension=code"`` strings (:func:`missing_codes_map`).
            missing_safe: overrides ``MIS(0|1)``.

        Raises:
            RuleError: a malformed rule or a bad option value.
            InputError: missing codes not of the form ``dimension=code``.
        """
        check_options({"zero_unsafe": zero_unsafe}, CONSTRAINTS, error=RuleError)
        if isinstance(rules, RuleSet):
            fields: dict[str, Any] = {"rules": rules.rules, "weight_mode": rules.weight_mode,
                                      "manual_margin": rules.manual_margin, "missing_codes": rules.missing_codes,
                                      "missing_safe": rules.missing_safe}
        else:
            fields = _fields_of(parse_rules(rules))
        if weight_mode is not None:
            fields["weight_mode"] = weight_mode
        if manual_margin is not None:
            fields["manual_margin"] = manual_margin
        if missing_codes is not None:
            fields["missing_codes"] = missing_codes_map(missing_codes)
        if missing_safe is not None:
            fields["missing_safe"] = missing_safe
        if zero_unsafe is not None and zero_unsafe is not False:
            fields["rules"] = fields["rules"] + (ZeroRule(0.0 if zero_unsafe is True else float(zero_unsafe)),)
        return cls(**fields)

    @property
    def needing_top(self) -> tuple[Rule, ...]:
        """The rules that need the largest contributions of each cell."""
        return tuple(r for r in self.rules if r.needs_top > 0)

    @property
    def assuming_nonnegative(self) -> tuple[Rule, ...]:
        """The rules that assume non-negative contributions (p%, (n,k), linear)."""
        return tuple(r for r in self.rules if r.assumes_nonnegative)

    @property
    def has_frequency_rule(self) -> bool:
        """True when a minimum frequency rule is among the rules (it needs counts)."""
        return any(isinstance(r, FreqRule) for r in self.rules)

    def to_strings(self) -> list[str]:
        """The rules, then the options that differ from the defaults, as rule strings."""
        out = [r.to_string() for r in self.rules]
        if self.weight_mode == "expand":
            out.append(WeightOption(True).to_string())
        if self.missing_safe:
            out.append(MissingOption(True).to_string())
        if self.manual_margin != DEFAULT_MANUAL_MARGIN:
            out.append(ManualRule(self.manual_margin).to_string())
        return out


def _fields_of(tokens: list[Rule | RuleOption]) -> dict[str, Any]:
    """A rule set's fields from parsed rules and the options among them (``WGT(1)``
    anywhere sets mode ``expand``; the last ``MIS`` and ``MAN`` count)."""
    weights = any(isinstance(t, WeightOption) and t.on for t in tokens)
    mis = [t for t in tokens if isinstance(t, MissingOption)]
    man = [t for t in tokens if isinstance(t, ManualRule)]
    return {
        "rules": tuple(t for t in tokens if isinstance(t, Rule)),
        "weight_mode": "expand" if weights else None,
        "manual_margin": man[-1].margin if man else DEFAULT_MANUAL_MARGIN,
        "missing_safe": bool(mis and mis[-1].on),
    }
