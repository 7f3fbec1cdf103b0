"""Online query protection (issue 14; seed 003 C, the ARMS approach): noisy weights fixed
once, every cell of an answer checked against a pandas computation of the same rules."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from tablesafe.errors import InputError
from tablesafe.noise import NoiseOptions, multipliers
from tablesafe.query import QueryRules, QueryServer


@pytest.fixture(scope="module")
def micro():
    # few, skewed farms: cells with too few units, dominant farms and large noise occur
    rng = np.random.default_rng(4)
    n = 300
    return pd.DataFrame({
        "region": rng.choice(list("ABCDEFGH"), n), "size": rng.choice(["s", "m", "l", "x"], n),
        "farm": rng.integers(0, 80, n), "w": rng.uniform(1, 4, n), "sales": rng.lognormal(3, 3.0, n),
    })


def _expected(micro, dims, rules, options):
    """The same answer computed with pandas (independent of the DuckDB query)."""
    wn = micro["w"].to_numpy() * multipliers(micro["farm"].to_numpy(), options)
    d = micro.assign(x=micro["sales"] * micro["w"], xn=micro["sales"] * wn)
    rows = []
    for k in range(len(dims) + 1):
        for combo in itertools.combinations(dims, k):
            keys = list(combo)
            units = d.groupby([*keys, "farm"]).agg(x=("x", "sum"), xn=("xn", "sum"), w=("w", "max")).reset_index()
            cells = units.groupby(keys) if keys else [((), units)]
            for key, g in cells:
                key = key if isinstance(key, tuple) else (key,)
                code = {dim: TOTAL_OR(key, keys, dim) for dim in dims}
                x = np.sort(g["x"].to_numpy())[::-1]
                t, tn, c = g["x"].sum(), g["xn"].sum(), g["w"].sum()
                x1 = x[0] if len(x) else 0.0
                x2 = x[1] if len(x) > 1 else 0.0
                need = rules.p / 100 * x1 - (t - x1 - x2)
                ratio = tn / t if t else 1.0
                if c < rules.min_count:
                    st = "count"
                elif ratio > rules.max_ratio or ratio < 1 / rules.max_ratio:
                    st = "noise"
                elif need > 1e-9 * max(1, abs(t)) and abs(tn - t) < need:
                    st = "p%"
                else:
                    st = "published"
                rows.append({**code, "noisy": tn, "status": st})
    return pd.DataFrame(rows)


def TOTAL_OR(key, keys, dim):
    return str(key[keys.index(dim)]) if dim in keys else "Total"


def test_answer_follows_the_rules(micro):
    rules = QueryRules(p=15, min_count=15, max_ratio=1.1)
    server = QueryServer(micro, weight="w", unit="farm", noise_percent=10, seed=11, rules=rules)
    ans = server.answer(["region", "size"], "sales")
    exp = _expected(micro, ["region", "size"], rules, NoiseOptions.build(10, None, 11))
    assert len(ans) == len(exp) == 9 * 5
    merged = ans.merge(exp, on=["region", "size"], suffixes=("", "_exp"))
    assert len(merged) == len(ans)
    assert (merged["status"] == merged["status_exp"]).all()
    shown = merged["status"] == "published"
    assert set(merged["status"]) == {"published", "count", "noise", "p%"}
    np.testing.assert_allclose(merged.loc[shown, "value"].astype(float), merged.loc[shown, "noisy"], rtol=1e-6)
    assert merged.loc[~shown, "value"].isna().all()


def test_same_query_same_answer_and_the_seed_matters(micro):
    a = QueryServer(micro, weight="w", unit="farm", seed=3).answer(["size", "region"], "sales")
    b = QueryServer(micro, weight="w", unit="farm", seed=3).answer(["size", "region"], "sales")
    c = QueryServer(micro, weight="w", unit="farm", seed=4).answer(["size", "region"], "sales")
    assert a.equals(b)
    assert not a["value"].astype(float).fillna(0).equals(c["value"].astype(float).fillna(0))


def test_bad_queries_are_refused(micro):
    server = QueryServer(micro, weight="w", unit="farm")
    with pytest.raises(InputError, match="column"):
        server.answer(["region", "nope"], "sales")
    with pytest.raises(InputError, match="distinct"):
        server.answer(["region", "region"], "sales")
    with pytest.raises(InputError):
        QueryRules(max_ratio=1.0)
