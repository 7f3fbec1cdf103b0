"""A straightforward pure-Python tabulation, the reference the DuckDB path must equal."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np

from tablesafe.structure import Hierarchy


def chain(h: Hierarchy, code: str) -> list[str]:
    """The code and all its ancestors up to the total."""
    i = h.index(code)
    out = [code]
    while h.parent[i] != -1:
        i = h.parent[i]
        out.append(h.codes[i])
    return out


def reference(records: list[dict], hierarchies: dict[str, Hierarchy], tables: list[list[str]],
              holding: bool, k: int, dim_order: list[str]) -> dict[tuple, dict]:
    """Per cell (codes in ``dim_order``, absent dims at their total): every CellTable field."""
    members: dict[tuple, set[int]] = defaultdict(set)
    for idx, rec in enumerate(records):
        for t in tables:
            chains = [chain(hierarchies[d], rec[d]) for d in t]
            for combo in itertools.product(*chains):
                key = tuple(combo[t.index(d)] if d in t else hierarchies[d].total for d in dim_order)
                members[key].add(idx)
    out = {}
    for key, idxs in members.items():
        recs = [records[i] for i in sorted(idxs)]
        units: dict = {}
        for i, r in zip(sorted(idxs), recs):
            u = r["h"] if holding else i
            if u not in units:
                units[u] = {"c": 0.0, "w": 1.0 if holding else r["w"], "r": False, "v": True}
            units[u]["c"] += r["x"]
            units[u]["r"] = units[u]["r"] or r["req"]
            units[u]["v"] = units[u]["v"] and r["wv"]
        ul = sorted(units.values(), key=lambda u: (u["c"], u["w"], u["r"], u["v"]), reverse=True)
        pad = k - min(k, len(ul))
        top = ul[:k]
        nonw = sorted((u["c"] for u in ul if not u["v"]), reverse=True)[:k]
        absv = sorted((abs(u["c"]) for u in ul), reverse=True)[:k]
        neg = [u["c"] for u in ul if u["c"] < 0]
        out[key] = {
            "value": sum(r["x"] * r["w"] for r in recs),
            "records": len(recs),
            "contributors": len(ul),
            "top": [u["c"] for u in top] + [0.0] * pad,
            "top_n": min(k, len(ul)),
            "top_weight": [u["w"] for u in top] + [1.0] * pad,
            "top_request": [u["r"] for u in top] + [False] * pad,
            "top_waived": [u["v"] for u in top] + [False] * pad,
            "nonwaived_top": nonw + [0.0] * (k - len(nonw)),
            "abs_top": absv + [0.0] * (k - len(absv)),
            "neg_count": len(neg),
            "neg_sum": float(sum(neg)),
            "weight_sum": sum(r["w"] for r in recs),
            "unweighted_value": sum(r["x"] for r in recs),
            "cost": sum(r["e"] * r["w"] for r in recs),
        }
    return out


EMPTY_FIELDS = {"value": 0.0, "records": 0, "contributors": 0, "top_n": 0, "neg_count": 0, "neg_sum": 0.0,
                "weight_sum": 0.0, "unweighted_value": 0.0, "cost": 0.0}


def compare(cells, ref: dict[tuple, dict], k: int) -> None:
    """Assert every field of every cell of ``cells`` equals the reference."""
    names = [d.name for d in cells.model.dims]
    codes = cells.model.codes[names].itertuples(index=False, name=None)
    for i, key in enumerate(codes):
        exp = ref.get(tuple(key))
        if exp is None:
            exp = dict(EMPTY_FIELDS, top=[0.0] * k, top_weight=[1.0] * k, top_request=[False] * k,
                       top_waived=[False] * k, nonwaived_top=[0.0] * k, abs_top=[0.0] * k)
        for f in ("value", "weight_sum", "unweighted_value", "neg_sum"):
            assert np.isclose(getattr(cells, f)[i], exp[f], atol=1e-9), (key, f)
        assert np.isclose(cells.extra["cost"][i], exp["cost"], atol=1e-9), (key, "cost")
        for f in ("records", "contributors", "top_n", "neg_count"):
            assert getattr(cells, f)[i] == exp[f], (key, f, getattr(cells, f)[i], exp[f])
        for f in ("top", "top_weight", "nonwaived_top", "abs_top"):
            assert np.allclose(getattr(cells, f)[i], exp[f]), (key, f, getattr(cells, f)[i], exp[f])
        for f in ("top_request", "top_waived"):
            assert list(getattr(cells, f)[i]) == exp[f], (key, f, getattr(cells, f)[i], exp[f])
