"""Primary sensitivity assessment: from a CellTable and rules to a Problem.

:func:`assess` decides per cell its status (``S`` safe, ``U`` sensitive by rule, ``A``
sensitive by hand, ``P`` protected (must be published), ``Z`` empty), which rules fired,
the upper/lower/sliding protection levels (the maximum over the rules that fire), the a
priori bounds, the cost, and the protection capacity of seed 000 section 7.1. Everything
is computed on whole arrays; there is no loop over cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.celltable import CellTable
from tablesafe.errors import RuleError
from tablesafe.problem import (
    EMPTY,
    MANUAL,
    PRIMARY,
    PROTECTED,
    SAFE,
    Assessment,
    Contributions,
    Problem,
)
from tablesafe.rules.combine import RuleVerdicts, combine
from tablesafe.rules.model import PRule, Rule
from tablesafe.rules.ruleset import RuleSet, RuleSpec
from tablesafe.rules.view import ContributionView, Requests, RuleResult, expand_top
from tablesafe.validation import BOOLEAN, NON_NEGATIVE, Constraints, OneOf, check_options

COUNTS = ("holdings", "records")
"""What the frequency rule counts."""
NEGATIVE_MODES = ("refuse", "abs")
"""What the magnitude rules do with negative contributions."""
FREQ_LEVELS = ("range", "directional")
"""The protection levels of frequency rules."""

CONSTRAINTS: Constraints = {
    "count": [OneOf(COUNTS)],
    "negative": [OneOf(NEGATIVE_MODES)],
    "freq_levels": [OneOf(FREQ_LEVELS)],
    "symmetric": [BOOLEAN],
    "sliding": [BOOLEAN],
    "cost_lambda": [NON_NEGATIVE],
}
"""The allowed values of the assessment's options (the rules' own: ``RuleSet``)."""

COST_KINDS = ("value", "unity", "contributors", "freq")
_MAX_NAMES = 5


def _cell_list(names: np.ndarray, mask: np.ndarray) -> str:
    idx = np.flatnonzero(mask)
    shown = ", ".join(repr(str(names[i])) for i in idx[:_MAX_NAMES])
    more = f" and {len(idx) - _MAX_NAMES} more" if len(idx) > _MAX_NAMES else ""
    return shown + more


def required_top_k(rules: RuleSpec | RuleSet) -> int:
    """How many of the largest unit contributions per cell the rules need (tabulate's top_k):
    :attr:`RuleSet.top_k`."""
    return RuleSet.build(rules).top_k


def _build_view(cells: CellTable, need: int, weight_mode: str | None, count: str, use_abs: bool) -> ContributionView:
    """The contributions the rules see, per the weight mode and the sign option; ``need``
    is the number of largest contributions the rules need."""
    waived_any = bool(np.asarray(cells.top_waived).any())
    if cells.k < need:
        raise RuleError(
            f"the rules need the {need} largest contributions per cell, but the cell table keeps only "
            f"{cells.k}; tabulate again with top_k >= {need}"
        )
    nonempty = np.asarray(cells.contributors) > 0
    value = np.asarray(cells.value, dtype=float)
    top = np.asarray(cells.top, dtype=float)
    allzero = nonempty & (np.asarray(cells.abs_top, dtype=float)[:, 0] == 0)
    if count == "records":
        cnt = np.asarray(cells.records, dtype=float)
    else:
        cnt = np.asarray(cells.contributors, dtype=float)
    first_waived = np.asarray(cells.top_waived, dtype=bool)[:, 0]
    nonwaived = np.asarray(cells.nonwaived_top, dtype=float) if waived_any else None
    # what every weight mode shares: the cells' values, counts and emptiness
    common = {"value": value, "first_waived": first_waived, "count": cnt, "nonempty": nonempty, "allzero": allzero}
    requests = Requests(np.asarray(cells.top_request, dtype=bool), top, value)

    if use_abs:
        if waived_any:
            raise RuleError("waivers cannot be combined with the absolute-value form for negative contributions")
        if weight_mode in ("expand", "known"):
            raise RuleError(f"weight mode {weight_mode!r} cannot be combined with negative contributions")
        a = np.asarray(cells.abs_top, dtype=float)
        X = value - 2.0 * np.asarray(cells.neg_sum, dtype=float)  # sum of |x|
        # the request flags follow the signed ordering of ``top``
        return ContributionView(**common, X=X, target=a, known=a, nonwaived=None, requests=requests)

    if weight_mode == "expand":
        if cells.holding is not None:
            raise RuleError(
                "weight mode 'expand' cannot be combined with holdings: the copies a weight stands for "
                "belong to no known holding (Handbook on Statistical Disclosure Control, 'Sampling weights')"
            )
        if waived_any:
            raise RuleError("weight mode 'expand' cannot be combined with waivers")
        m = max(need, 2)
        t = expand_top(top, np.asarray(cells.top_weight, dtype=float), m)
        common["count"] = np.asarray(cells.weight_sum, dtype=float)
        # the request flags do not follow the expanded copies: the request rule flags nothing here
        nobody = Requests(np.zeros((len(value), m), dtype=bool), t, value)
        return ContributionView(**common, X=value, target=t, known=t, nonwaived=None, requests=nobody)
    if weight_mode == "known":
        if waived_any:
            raise RuleError("weight mode 'known' cannot be combined with waivers")
        known = top * np.asarray(cells.top_weight, dtype=float)
        return ContributionView(**common, X=value, target=top, known=known, nonwaived=None, requests=requests)
    # no weights, or mode 'sample': sampled contributions against the (estimated) total
    return ContributionView(**common, X=value, target=top, known=top, nonwaived=nonwaived, requests=requests)


def _join_codes(frame: pd.DataFrame, cols: Sequence[str], strip: bool = False) -> np.ndarray:
    """Codes joined with ``|`` per row, without a Python loop over rows."""
    parts = []
    for c in cols:
        s = frame[c].astype(str)
        if strip:
            s = s.str.strip()
        parts.append(s.to_numpy(dtype=object))
    out = parts[0].copy()
    for p in parts[1:]:
        out = out + "|" + p
    return out


def cell_names(model: Any) -> np.ndarray:
    """Cell names (codes joined with ``|`` in dimension order), vectorised."""
    return _join_codes(model.codes, [d.name for d in model.dims])


def _match_cells(cells: CellTable, frame: pd.DataFrame, what: str) -> np.ndarray:
    """Positions of the frame's rows among the cells, by ``name`` or by dimension codes
    (errors name the frame's file, ``frame.attrs["file"]``, when it came from one)."""
    source = frame.attrs.get("file")
    if "name" in frame.columns:
        names = cell_names(cells.model)
        keys = frame["name"].astype(str).to_numpy()
    else:
        dims = [d.name for d in cells.model.dims]
        missing = [d for d in dims if d not in frame.columns]
        if missing:
            raise RuleError(f"{what}: give a 'name' column or one column per dimension (missing {missing})"
                            + (f" (file {source})" if source else ""))
        keys = _join_codes(frame, dims, strip=True)
        names = _join_codes(cells.model.codes, dims, strip=True)
    pos = pd.Index(names).get_indexer(keys)
    if (pos < 0).any():
        bad = [str(k) for k in np.asarray(keys)[pos < 0][:_MAX_NAMES]]
        line = int(np.flatnonzero(pos < 0)[0]) + 2
        where = f" (file {source}, line {line})" if source else ""
        raise RuleError(f"{what}: unknown cell(s) {', '.join(map(repr, bad))}{where}")
    return pos


def _manual_frame(manual: Any) -> pd.DataFrame:
    if isinstance(manual, pd.DataFrame):
        return manual
    if isinstance(manual, Mapping):
        return pd.DataFrame({"name": list(manual.keys()), "status": list(manual.values())})
    raise RuleError("manual statuses must be a DataFrame (name or codes, status[, margin]) or a dict name -> status")


def _bounds(
    cells: CellTable, bounds: Any, value: np.ndarray, names: np.ndarray, negative: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A priori bounds (absolute): default [0, inf) for non-negative data."""
    n = len(value)
    if bounds is None:
        if negative:
            raise RuleError(
                "the data have negative contributions (cells "
                + _cell_list(names, np.asarray(cells.neg_count) > 0)
                + "), so the default a priori interval [0, inf) is wrong; give bounds per cell or as a "
                "percentage of the value (bounds=50 for value +- 50%)"
            )
        return np.zeros(n), np.full(n, np.inf)
    if isinstance(bounds, (int, float)):
        if bounds < 0:
            raise RuleError(f"a priori bound percentage must be >= 0, got {bounds}")
        band = bounds / 100.0 * np.abs(value)
        lo = value - band
        if not negative:
            lo = np.maximum(lo, 0.0)
        return lo, value + band
    if isinstance(bounds, tuple) and len(bounds) == 2:
        lo = np.broadcast_to(np.asarray(bounds[0], dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(bounds[1], dtype=float), (n,)).copy()
    elif isinstance(bounds, pd.DataFrame):
        if not {"lower", "upper"} <= set(bounds.columns):
            raise RuleError("a bounds frame needs columns 'lower' and 'upper' (and 'name' or the dimension codes)")
        lo = np.full(n, -np.inf) if negative else np.zeros(n)
        hi = np.full(n, np.inf)
        pos = _match_cells(cells, bounds, "bounds")
        lo[pos] = bounds["lower"].to_numpy(dtype=float)
        hi[pos] = bounds["upper"].to_numpy(dtype=float)
    else:
        raise RuleError("bounds must be None, a percentage, a (lower, upper) pair of arrays, or a frame")
    bad = (lo > value + 1e-9 * np.abs(value)) | (hi < value - 1e-9 * np.abs(value))
    if bad.any():
        raise RuleError("a priori bounds do not contain the cell value for cell(s) " + _cell_list(names, bad))
    return lo, hi


def cell_costs(cells: CellTable, cost: str | np.ndarray = "value", cost_lambda: float = 1.0) -> np.ndarray:
    """Cost of withholding each cell.

    ``cost``: ``"value"`` (|value|, default), ``"unity"`` (1 each), ``"contributors"`` or
    ``"freq"`` (number of units), the name of an array in ``cells.extra``, or an array.
    The lambda transform follows tau-ARGUS: ``cost ** lambda`` for ``lambda > 0`` and
    ``log(1 + cost)`` for ``lambda == 0`` (a smooth limit that keeps zero costs at zero).
    """
    if isinstance(cost, str):
        if cost == "value":
            c = np.abs(np.asarray(cells.value, dtype=float))
        elif cost == "unity":
            c = np.ones(cells.n)
        elif cost in ("contributors", "freq"):
            c = np.asarray(cells.contributors, dtype=float)
        elif cost in cells.extra:
            c = np.asarray(cells.extra[cost], dtype=float)
        else:
            raise RuleError(
                f"unknown cost {cost!r}: use value, unity, contributors (freq) or a column of the cell table "
                f"({', '.join(cells.extra) or 'none available'})"
            )
    else:
        c = np.asarray(cost, dtype=float)
        if c.shape != (cells.n,):
            raise RuleError(f"cost array has shape {c.shape}, expected ({cells.n},)")
    if (c < 0).any() or not np.isfinite(c).all():
        raise RuleError("costs must be finite and non-negative")
    check_options({"cost_lambda": cost_lambda}, CONSTRAINTS, error=RuleError)
    if cost_lambda == 0:
        return np.log1p(c)
    if cost_lambda != 1:
        return c**cost_lambda
    return c.copy()


def assess(
    cells: CellTable,
    rules: RuleSpec | RuleSet,
    *,
    weight_mode: str | None = None,
    count: str = "holdings",
    zero_unsafe: float | bool | None = None,
    manual: Any = None,
    bounds: Any = None,
    cost: str | np.ndarray = "value",
    cost_lambda: float = 1.0,
    symmetric: bool = True,
    sliding: bool = False,
    negative: str = "refuse",
    freq_levels: str = "range",
    manual_margin: float | None = None,
    missing_codes: Mapping[str, str | Sequence[str]] | None = None,
    missing_safe: bool | None = None,
) -> Problem:
    """Find the sensitive cells and build the protection Problem.

    Args:
        cells: tabulated cells (contributions already grouped by holding if wanted).
        rules: a :class:`RuleSet`, or rule strings or objects (see :func:`parse_rules`)
            to build one with the rule options below (``weight_mode``, ``zero_unsafe``,
            ``manual_margin``, ``missing_codes``, ``missing_safe``; given with a rule
            set, they override its own); a cell is sensitive when any rule says so; its
            levels are the maximum over the rules that fire.
        weight_mode: with sampling weights: ``"expand"`` (each record counts as w units,
            as in Loeve's *Notes on sensitivity measures and protection levels*, section 8),
            ``"sample"`` (estimated total against the largest sampled contributions, the
            weighted p% and dominance rules of the Handbook on Statistical Disclosure
            Control) or ``"known"`` (public weights: the intruder subtracts ``w x`` for
            its own contribution, the Handbook's variant for known weights). None: ``"sample"``
            semantics (unweighted contributions against the weighted total), or
            ``"expand"`` when the rules contain tau-ARGUS ``WGT(1)``.
        count: what the frequency rule counts: ``"holdings"`` (units, default) or ``"records"``.
        zero_unsafe: make zero cells (all contributions 0) sensitive with this absolute
            protection range (True means 0); same as adding the rule ``zero(range)``.
        manual: statuses set by hand: DataFrame with ``name`` (or the dimension codes),
            ``status`` (``A``: sensitive, ``P``: protected/must publish) and optional
            ``margin`` (percent of the value for A cells), or a dict name -> status.
        bounds: a priori bounds: None ([0, inf), refused for data with negative
            contributions), a percentage band around the value, a pair of arrays
            (lower, upper) or a frame with ``lower``/``upper`` per named cell.
        cost: ``value``, ``unity``, ``contributors``/``freq``, a cell-table column or an array.
        cost_lambda: cost transform, ``cost**lambda`` (``log(1+cost)`` for 0).
        symmetric: lower level = upper level (tau-ARGUS); False: rule-derived lower
            levels (none for p% and (n,k); for (p,q) the lower levels of Loeve's notes,
            section 5.1).
        sliding: also set a sliding level = upper + rule-derived lower (Loeve's notes,
            section 5.1.1).
        negative: ``"refuse"`` (default: rules that assume non-negative data raise for
            cells with negative contributions) or ``"abs"`` (use absolute contributions,
            as Daalmans and de Waal extend the (p,q) rule). The (p,q) rule always uses absolute contributions when
            negatives occur.
        freq_levels: ``"range"`` (range % of the value) or ``"directional"`` (also the
            direction-wise levels for cells with too few contributors of Loeve's notes,
            section 5.3).
        manual_margin: margin % for A cells without their own (default: MAN rule or 10).
        missing_codes: per dimension, the code(s) that stand for a missing value.
        missing_safe: cells with a missing code in any dimension are never sensitive by
            rule (tau-ARGUS ``MIS(1)``, "Missing=safe"); default: as the rules say (MIS).

    Returns:
        A :class:`Problem` with status, levels, bounds, cost, rule, capacity and model.
    """
    ruleset = RuleSet.build(rules, weight_mode=weight_mode, zero_unsafe=zero_unsafe, manual_margin=manual_margin,
                            missing_codes=missing_codes, missing_safe=missing_safe)
    check_options({"count": count, "negative": negative, "freq_levels": freq_levels, "symmetric": symmetric,
                   "sliding": sliding, "cost_lambda": cost_lambda}, CONSTRAINTS, error=RuleError)
    model = cells.model
    names = cell_names(model)
    value = np.asarray(cells.value, dtype=float)
    use_abs = _check_cells(cells, ruleset, negative, names)
    view = _build_view(cells, ruleset.top_k, ruleset.weight_mode, count, use_abs)
    verdicts = combine(ruleset.rules, view)
    if freq_levels == "directional":
        verdicts.add_directional_levels(ruleset.rules, view, model.relations)
    if ruleset.missing_safe and ruleset.missing_codes:
        verdicts.exempt(_missing_cells(model, ruleset.missing_codes))
    status = np.full(cells.n, SAFE, dtype="<U1")
    status[verdicts.sensitive] = PRIMARY
    if manual is not None:  # seed 000 section 7.2
        _apply_manual(cells, manual, ruleset.manual_margin, names, status, verdicts)
    status[~view.nonempty] = EMPTY
    keep = np.isin(status, [PRIMARY, MANUAL])
    upl = np.where(keep, verdicts.upl, 0.0)
    lpl_rule = np.where(keep, verdicts.lower, 0.0)
    # the rule column names what fired for sensitive cells, and for protected (P) cells
    # the rules they override
    rule_col = verdicts.rule_column(keep | (status == PROTECTED))

    lower, upper = _bounds(cells, bounds, value, names, use_abs)
    # empty cells are published as known zeros (DESIGN.md): their interval is the value
    lower = np.where(status == EMPTY, value, lower)
    upper = np.where(status == EMPTY, value, upper)
    lpl = upl.copy() if symmetric else lpl_rule.copy()
    spl = np.where(keep, (upl + lpl_rule) if sliding else np.zeros(cells.n), 0.0)
    # a level beyond the a priori bound is capped there (DESIGN.md)
    room_down = np.maximum(value - lower, 0.0)
    room_up = np.maximum(upper - value, 0.0)
    capped = keep & ((lpl > room_down + 1e-12) | (upl > room_up + 1e-12))
    lpl = np.minimum(lpl, room_down)
    upl = np.minimum(upl, room_up)
    # protection capacity (seed 000 section 7.1)
    cap = room_down.copy() if verdicts.slack is None else np.minimum(np.clip(verdicts.slack, 0.0, None), room_down)
    cap[keep | (np.asarray(cells.contributors) <= 1) | (status == EMPTY)] = 0.0

    assessment = Assessment(rules=tuple(ruleset.to_strings()), fired=verdicts.fired, weight_mode=ruleset.weight_mode,
                            count=count, symmetric=symmetric, negative="abs" if use_abs else "none",
                            levels_capped_at_bounds=int(capped.sum()), holding=cells.holding,
                            percent=next(((float(r.p), int(r.n)) for r in ruleset.rules if isinstance(r, PRule)), None))
    return Problem(
        names=np.asarray(names, dtype=object),
        value=value.copy(),
        cost=cell_costs(cells, cost, cost_lambda),
        status=status,
        lower=lower,
        upper=upper,
        upl=upl,
        lpl=lpl,
        spl=spl,
        relations=model.relations,
        rhs=np.zeros(model.relations.shape[0]),
        codes=model.codes.copy(),
        contributors=np.asarray(cells.contributors).copy(),
        rule=rule_col,
        model=model,
        capacity=cap,
        response=cells.response,
        assessment=assessment,
        declared_missing=dict(cells.declared_missing),
        contributions=_contributions(cells),
        record_cells=getattr(cells, "record_cells", None),
    )


def _contributions(cells: CellTable) -> Contributions | None:
    """The cells' largest contributions for the contribution-level audit, or None when
    the input gave none (tabular input without top contributions)."""
    if not getattr(cells, "top_given", True):
        return None
    return Contributions(
        top=np.asarray(cells.top, dtype=float).copy(), count=np.asarray(cells.top_n, dtype=np.int64).copy(),
        weight=np.asarray(cells.top_weight, dtype=float).copy(),
        unweighted=np.asarray(cells.unweighted_value, dtype=float).copy(),
        negative=np.asarray(cells.neg_count) > 0)


def _check_cells(cells: CellTable, ruleset: RuleSet, negative: str, names: np.ndarray) -> bool:
    """Refuse cells the rules cannot judge soundly: no top contributions for rules that
    need them, values that are not finite, negative contributions under rules that
    assume none (unless ``negative="abs"``). Returns whether negatives occur (the rules
    then see absolute contributions)."""
    needs_top = ruleset.needing_top
    if needs_top and not getattr(cells, "top_given", True):
        raise RuleError(
            f"rule(s) {', '.join(r.to_string() for r in needs_top)} need the largest contributions "
            "of each cell, but the tabular input gives none: name the columns holding them with "
            "--top (Python: top=[...]), largest first, e.g. --top top1 --top top2. Without them "
            "every cell would look safe under these rules."
        )
    value = np.asarray(cells.value, dtype=float)
    bad = ~np.isfinite(value) | ~np.isfinite(np.asarray(cells.top, dtype=float)).all(axis=1)
    if bad.any():
        raise RuleError(f"cell value or contributions are missing or not finite for cell(s) {_cell_list(names, bad)}")
    neg = np.asarray(cells.neg_count) > 0
    has_neg = bool(neg.any())
    nonneg_rules = ruleset.assuming_nonnegative
    if has_neg and nonneg_rules and negative == "refuse":
        raise RuleError(
            f"rule(s) {', '.join(r.to_string() for r in nonneg_rules)} assume non-negative contributions, but "
            f"cell(s) {_cell_list(names, neg)} have negative ones. Use --negative abs (Python: negative='abs') to "
            "apply them to absolute contributions (as Daalmans and de Waal extend the (p,q) rule), a (p,q) rule, "
            "or a frequency rule; the Handbook on Statistical Disclosure Control also suggests a smaller p "
            "(p/f) or a larger k for data with negative values."
        )
    return has_neg


def _missing_cells(model: Any, missing_codes: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Cells with a missing code in any dimension."""
    miss = np.zeros(len(model.codes), dtype=bool)
    for dim, codes in missing_codes.items():
        if dim not in model.codes.columns:
            raise RuleError(f"missing_codes names an unknown dimension {dim!r}")
        col = model.codes[dim].astype(str).str.strip().to_numpy()
        miss |= np.isin(col, list(codes))
    return miss


def _apply_manual(cells: CellTable, manual: Any, default_margin: float, names: np.ndarray, status: np.ndarray,
                  verdicts: RuleVerdicts) -> None:
    """Statuses set by hand: A cells become sensitive with their margin (percent of the
    value; ``default_margin`` where none is given) as both levels, P cells protected.
    Changes ``status`` and ``verdicts`` in place."""
    frame = _manual_frame(manual)
    if "status" not in frame.columns:
        raise RuleError("manual statuses need a 'status' column (A = sensitive by hand, P = protected)")
    pos = _match_cells(cells, frame, "manual statuses")
    st = frame["status"].astype(str).str.strip().str.upper().to_numpy()
    st = np.where(st == PRIMARY, MANUAL, st)
    bad = ~np.isin(st, [MANUAL, PROTECTED])
    if bad.any():
        raise RuleError(
            f"manual status must be A (sensitive by hand) or P (protected), got {st[bad][0]!r} "
            f"for cell {names[pos[bad][0]]!r}"
        )
    margin = frame["margin"].to_numpy(dtype=float) if "margin" in frame.columns else np.full(len(frame), default_margin)
    margin = np.where(np.isnan(margin), default_margin, margin)
    a = st == MANUAL
    pa = pos[a]
    lvl = margin[a] / 100.0 * np.abs(np.asarray(cells.value, dtype=float)[pa])
    status[pa] = MANUAL
    verdicts.upl[pa] = np.maximum(verdicts.upl[pa], lvl)
    verdicts.lower[pa] = np.maximum(verdicts.lower[pa], lvl)
    verdicts.fired_bits[pa] |= verdicts.label("manual")
    status[pos[st == PROTECTED]] = PROTECTED


def analyst_frame(problem: Problem) -> pd.DataFrame:
    """Analyst view of an assessed problem: codes, value, contributors, status, rule, levels."""
    df = problem.codes.copy() if problem.codes is not None else pd.DataFrame({"name": problem.names})
    df = df.reset_index(drop=True)
    df["value"] = problem.value
    df["contributors"] = problem.contributors if problem.contributors is not None else np.nan
    df["status"] = problem.status
    df["rule"] = problem.rule if problem.rule is not None else ""
    df["upl"] = problem.upl
    df["lpl"] = problem.lpl
    df["spl"] = problem.spl
    return df


def rule_measure(
    cells: CellTable,
    rule: str | Rule,
    *,
    weight_mode: str | None = None,
    count: str = "holdings",
    negative: str = "refuse",
) -> RuleResult:
    """Evaluate one rule on every cell without building a Problem (for inspection and tests).

    Returns the :class:`RuleResult`; for linear measures ``upl`` is the raw level
    (negative for safe cells, ``-upl`` being the protection capacity), and the
    normalised measure of seed 003 B.1 is ``upl * -w_m`` with ``w_m`` the last weight of
    ``rule.to_linear()``.
    """
    ruleset = RuleSet.build(rule, weight_mode=weight_mode)
    if len(ruleset.rules) != 1:
        raise RuleError(f"give one sensitivity rule, not {rule!r}")
    check_options({"count": count, "negative": negative}, CONSTRAINTS, error=RuleError)
    use_abs = negative == "abs" or bool((np.asarray(cells.neg_count) > 0).any())
    view = _build_view(cells, ruleset.top_k, ruleset.weight_mode, count, use_abs)
    return ruleset.rules[0].evaluate(view)
