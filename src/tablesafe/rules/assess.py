"""Primary sensitivity assessment: from a CellTable and rules to a Problem.

:func:`assess` decides per cell its status (``S`` safe, ``U`` sensitive by rule, ``A``
sensitive by hand, ``P`` protected (must be published), ``Z`` empty), which rules fired,
the upper/lower/sliding protection levels (the maximum over the rules that fire), the a
priori bounds, the cost, and the protection capacity of seed 000 section 7.1. Everything
is computed on whole arrays; there is no loop over cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.celltable import CellTable
from tablesafe.errors import RuleError
from tablesafe.problem import EMPTY, MANUAL, PRIMARY, PROTECTED, SAFE, Problem
from tablesafe.rules.measures import ContributionView, RuleResult, evaluate, expand_top
from tablesafe.rules.model import (
    FreqRule,
    LinearRule,
    ManualRule,
    MissingOption,
    NKRule,
    PRule,
    Rule,
    WeightOption,
    ZeroRule,
)
from tablesafe.rules.parse import parse_rules

WEIGHT_MODES = ("expand", "sample", "known")
COST_KINDS = ("value", "unity", "contributors", "freq")
_MAX_NAMES = 5


def _cell_list(names: np.ndarray, mask: np.ndarray) -> str:
    idx = np.flatnonzero(mask)
    shown = ", ".join(repr(str(names[i])) for i in idx[:_MAX_NAMES])
    more = f" and {len(idx) - _MAX_NAMES} more" if len(idx) > _MAX_NAMES else ""
    return shown + more


def required_top_k(rules: str | Rule | Iterable[str | Rule]) -> int:
    """How many of the largest unit contributions per cell the rules need (tabulate's top_k).

    ``p(p, n)`` and ``pq(p, q, n)`` need ``n + 1``, ``nk(n, k)`` needs ``n``, ``linear`` one
    less than its number of weights, the request rule 2; at least 1.
    """
    return max([r.needs_top for r in parse_rules(rules)] + [1])


def _build_view(
    cells: CellTable,
    rules: Sequence[Rule],
    weight_mode: str | None,
    count: str,
    use_abs: bool,
    names: np.ndarray,
) -> ContributionView:
    """The contributions the rules see, per the weight mode and the sign option."""
    need = required_top_k(rules)
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
    elif count == "holdings":
        cnt = np.asarray(cells.contributors, dtype=float)
    else:
        raise RuleError(f"count must be 'holdings' or 'records', got {count!r}")
    request = np.asarray(cells.top_request, dtype=bool)
    first_waived = np.asarray(cells.top_waived, dtype=bool)[:, 0]
    nonwaived = np.asarray(cells.nonwaived_top, dtype=float) if waived_any else None

    if use_abs:
        if waived_any:
            raise RuleError("waivers cannot be combined with the absolute-value form for negative contributions")
        if weight_mode in ("expand", "known"):
            raise RuleError(f"weight mode {weight_mode!r} cannot be combined with negative contributions")
        X = value - 2.0 * np.asarray(cells.neg_sum, dtype=float)  # sum of |x|
        a = np.asarray(cells.abs_top, dtype=float)
        # the request flags follow the signed ordering of ``top``
        return ContributionView(X, a, a, None, first_waived, request, cnt, nonempty, allzero, top, value)

    if weight_mode == "expand":
        if cells.holding is not None:
            raise RuleError(
                "weight mode 'expand' cannot be combined with holdings: the copies a weight stands for "
                "belong to no known holding (seed 002 'Sampling weights')"
            )
        if waived_any:
            raise RuleError("weight mode 'expand' cannot be combined with waivers")
        m = max(need, 2)
        t = expand_top(top, np.asarray(cells.top_weight, dtype=float), m)
        cnt = np.asarray(cells.weight_sum, dtype=float)
        req = np.zeros((len(value), m), dtype=bool)
        return ContributionView(value, t, t, None, first_waived, req, cnt, nonempty, allzero)
    if weight_mode == "known":
        if waived_any:
            raise RuleError("weight mode 'known' cannot be combined with waivers")
        known = top * np.asarray(cells.top_weight, dtype=float)
        return ContributionView(value, top, known, None, first_waived, request, cnt, nonempty, allzero)
    # no weights, or mode 'sample': sampled contributions against the (estimated) total
    return ContributionView(value, top, top, nonwaived, first_waived, request, cnt, nonempty, allzero)


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
    if cost_lambda < 0:
        raise RuleError(f"cost lambda must be >= 0, got {cost_lambda}")
    if cost_lambda == 0:
        return np.log1p(c)
    if cost_lambda != 1:
        return c**cost_lambda
    return c.copy()


def assess(
    cells: CellTable,
    rules: str | Rule | Iterable[str | Rule],
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
        rules: rule strings or objects (see :func:`parse_rules`); a cell is sensitive
            when any rule says so; its levels are the maximum over the rules that fire.
        weight_mode: with sampling weights: ``"expand"`` (each record counts as w units,
            seed 000 section 8), ``"sample"`` (estimated total against the largest sampled
            contributions, seed 002 eq. p-percent-weighted / dominance-weighted) or
            ``"known"`` (public weights, eq. p-percent-weighted-alt). None: ``"sample"``
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
            levels (none for p% and (n,k), seed 000 5.1.2/5.1.3; eq. 12/14 for (p,q)).
        sliding: also set a sliding level = upper + rule-derived lower (seed 000 5.1.1).
        negative: ``"refuse"`` (default: rules that assume non-negative data raise for
            cells with negative contributions) or ``"abs"`` (use absolute contributions,
            seed 001 section 5). The (p,q) rule always uses absolute contributions when
            negatives occur.
        freq_levels: ``"range"`` (range % of the value) or ``"directional"`` (also the
            direction-wise levels of seed 000 section 5.3).
        manual_margin: margin % for A cells without their own (default: MAN rule or 10).
        missing_codes: per dimension, the code(s) that stand for a missing value.
        missing_safe: cells with a missing code in any dimension are never sensitive by
            rule (tau-ARGUS ``MIS(1)``, "Missing=safe"); default: as the rules say (MIS).

    Returns:
        A :class:`Problem` with status, levels, bounds, cost, rule, capacity and model.
    """
    rule_list = parse_rules(rules)
    model = cells.model
    names = cell_names(model)
    n = cells.n
    value = np.asarray(cells.value, dtype=float)

    if any(isinstance(r, WeightOption) and r.apply for r in rule_list) and weight_mode is None:
        weight_mode = "expand"
    if weight_mode is not None and weight_mode not in WEIGHT_MODES:
        raise RuleError(f"weight_mode must be one of {', '.join(WEIGHT_MODES)}, got {weight_mode!r}")
    if zero_unsafe is not None and zero_unsafe is not False:
        rng = 0.0 if zero_unsafe is True else float(zero_unsafe)
        rule_list = rule_list + [ZeroRule(rng)]
    if negative not in ("refuse", "abs"):
        raise RuleError(f"negative must be 'refuse' or 'abs', got {negative!r}")
    if freq_levels not in ("range", "directional"):
        raise RuleError(f"freq_levels must be 'range' or 'directional', got {freq_levels!r}")

    needs_top = [r for r in rule_list if r.needs_top > 0]
    if needs_top and not getattr(cells, "top_given", True):
        raise RuleError(
            f"rule(s) {', '.join(r.to_string() for r in needs_top)} need the largest contributions "
            "of each cell, but the tabular input gives none: name the columns holding them with "
            "--top (Python: top=[...]), largest first, e.g. --top top1 --top top2. Without them "
            "every cell would look safe under these rules."
        )
    bad = ~np.isfinite(value) | ~np.isfinite(np.asarray(cells.top, dtype=float)).all(axis=1)
    if bad.any():
        raise RuleError(f"cell value or contributions are missing or not finite for cell(s) {_cell_list(names, bad)}")
    neg = np.asarray(cells.neg_count) > 0
    has_neg = bool(neg.any())
    nonneg_rules = [r for r in rule_list if isinstance(r, (PRule, NKRule, LinearRule))]
    if has_neg and nonneg_rules and negative == "refuse":
        raise RuleError(
            f"rule(s) {', '.join(r.to_string() for r in nonneg_rules)} assume non-negative contributions, but "
            f"cell(s) {_cell_list(names, neg)} have negative ones. Use --negative abs (Python: negative='abs') to apply them to absolute "
            "contributions (seed 001 section 5), a (p,q) rule, or a frequency rule; see also the p/f and k_f "
            "adjustments of seed 002 (tablesafe.rules.params.p_negative, k_negative)."
        )
    use_abs = has_neg

    view = _build_view(cells, rule_list, weight_mode, count, use_abs, names)
    nonempty = view.nonempty

    sensitive = np.zeros(n, dtype=bool)
    upl = np.zeros(n)
    lower_rule = np.zeros(n)
    slack = np.full(n, np.inf)
    any_linear = False
    fired_bits = np.zeros(n, dtype=np.int64)  # bit j set: rule j fired
    labels: list[str] = []
    fired: dict[str, int] = {}
    for r in rule_list:
        res: RuleResult | None = evaluate(r, view, value)
        if res is None:
            continue
        s = res.sensitive & nonempty
        fired[r.to_string()] = int(s.sum())
        sensitive |= s
        upl = np.where(s, np.maximum(upl, res.upl), upl)
        lower_rule = np.where(s, np.maximum(lower_rule, res.lower), lower_rule)
        if res.slack is not None:
            any_linear = True
            slack = np.minimum(slack, res.slack)
        if len(labels) >= 62:
            raise RuleError("at most 62 rules can be combined")
        fired_bits |= s.astype(np.int64) << len(labels)
        labels.append(r.to_string())

    if freq_levels == "directional":
        from tablesafe.rules.directional import directional_levels

        freq_rules = [r for r in rule_list if isinstance(r, FreqRule)]
        for r in freq_rules:
            fmask = nonempty & (view.count < r.n - 1e-9)
            extra = directional_levels(model.relations, value, view.count, fmask, r.n)
            upl = np.where(fmask, np.maximum(upl, extra), upl)

    if missing_safe is None:
        mis = [r for r in rule_list if isinstance(r, MissingOption)]
        missing_safe = bool(mis and mis[-1].safe)
    if missing_safe:
        if not missing_codes:
            raise RuleError("missing codes are to be safe (MIS(1)), but no missing_codes were given")
        miss = np.zeros(n, dtype=bool)
        for dim, codes in missing_codes.items():
            if dim not in model.codes.columns:
                raise RuleError(f"missing_codes names an unknown dimension {dim!r}")
            codes = [codes] if isinstance(codes, str) else list(codes)
            col = model.codes[dim].astype(str).str.strip().to_numpy()
            miss |= np.isin(col, [str(c).strip() for c in codes])
        sensitive &= ~miss
        fired_bits = np.where(miss, 0, fired_bits)

    status = np.full(n, SAFE, dtype="<U1")
    status[sensitive] = PRIMARY
    lpl_rule = lower_rule

    # manual statuses (seed 000 section 7.2)
    man_rules = [r for r in rule_list if isinstance(r, ManualRule)]
    default_margin = manual_margin if manual_margin is not None else (man_rules[-1].margin if man_rules else 10.0)
    if manual is not None:
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
        margin = (
            frame["margin"].to_numpy(dtype=float) if "margin" in frame.columns else np.full(len(frame), default_margin)
        )
        margin = np.where(np.isnan(margin), default_margin, margin)
        a = st == MANUAL
        pa = pos[a]
        lvl = margin[a] / 100.0 * np.abs(value[pa])
        status[pa] = MANUAL
        upl[pa] = np.maximum(upl[pa], lvl)
        lpl_rule[pa] = np.maximum(lpl_rule[pa], lvl)
        manual_bit = 1 << len(labels)
        labels.append("manual")
        fired_bits[pa] |= manual_bit
        pp = pos[st == PROTECTED]
        status[pp] = PROTECTED

    status[~nonempty] = EMPTY
    keep = np.isin(status, [PRIMARY, MANUAL])
    upl = np.where(keep, upl, 0.0)
    lpl_rule = np.where(keep, lpl_rule, 0.0)
    # the rule column names what fired for sensitive cells, and for protected (P) cells
    # the rules they override
    fired_bits = np.where(keep | (status == PROTECTED), fired_bits, 0)
    combos, inverse = np.unique(fired_bits, return_inverse=True)
    combo_labels = np.array(
        ["|".join(lab for j, lab in enumerate(labels) if (int(c) >> j) & 1) for c in combos], dtype=object
    )
    rule_col = combo_labels[inverse.reshape(-1)]

    lower, upper = _bounds(cells, bounds, value, names, has_neg)
    # empty cells are published as known zeros (DESIGN.md): their interval is the value
    lower = np.where(status == EMPTY, value, lower)
    upper = np.where(status == EMPTY, value, upper)
    lpl = upl.copy() if symmetric else lpl_rule.copy()
    spl = (upl + lpl_rule) if sliding else np.zeros(n)
    spl = np.where(keep, spl, 0.0)
    # a level beyond the a priori bound is capped there (DESIGN.md)
    room_down = np.maximum(value - lower, 0.0)
    room_up = np.maximum(upper - value, 0.0)
    capped = keep & ((lpl > room_down + 1e-12) | (upl > room_up + 1e-12))
    lpl = np.minimum(lpl, room_down)
    upl = np.minimum(upl, room_up)

    # protection capacity (seed 000 section 7.1)
    if any_linear:
        cap = np.clip(slack, 0.0, None)
        cap = np.minimum(cap, room_down)
    else:
        cap = room_down.copy()
    cap[keep | (np.asarray(cells.contributors) <= 1) | (status == EMPTY)] = 0.0

    costs = cell_costs(cells, cost, cost_lambda)
    meta = {
        "rules": [r.to_string() for r in rule_list],
        "fired": fired,
        "weight_mode": weight_mode,
        "count": count,
        "symmetric": symmetric,
        "negative": "abs" if use_abs else "none",
        "levels_capped_at_bounds": int(capped.sum()),
        "response": cells.response,
        "holding": cells.holding,
    }
    return Problem(
        names=np.asarray(names, dtype=object),
        value=value.copy(),
        cost=costs,
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
        meta=meta,
    )


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
    (r,) = parse_rules(rule) if isinstance(rule, str) else [rule]
    names = cell_names(cells.model)
    use_abs = negative == "abs" or bool((np.asarray(cells.neg_count) > 0).any())
    view = _build_view(cells, [r], weight_mode, count, use_abs, names)
    res = evaluate(r, view, np.asarray(cells.value, dtype=float))
    if res is None:
        raise RuleError(f"{r.to_string()} is an option, not a sensitivity rule")
    return res
