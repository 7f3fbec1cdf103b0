"""Small hand-made problems for testing the interfaces without the other stages."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tablesafe import Dimension, Hierarchy, Problem, TableStructure, compile_tables


def small_problem(seed: int = 1) -> Problem:
    """A 2-D table region (2 groups of 2) x size (3 classes): 4 x 4 = 16 cells.

    Leaf values are random; totals are sums, so the relations hold. Two leaf cells are
    made sensitive (status U) with protection levels of 20% of their value; one cell has
    no contributors (status Z, value 0).
    """
    rng = np.random.default_rng(seed)
    region = Hierarchy.from_tree("Total", {"Total": ["N", "S"], "N": ["N1", "N2"], "S": ["S1", "S2"]})
    size = Hierarchy.flat(["1", "2", "3"])
    model = compile_tables(TableStructure((Dimension("region", region), Dimension("size", size))))
    codes = model.codes
    leaf_r = {c for c in region.leaves}
    leaf_s = set(size.leaves)
    is_leaf = codes["region"].isin(leaf_r) & codes["size"].isin(leaf_s)
    value = np.zeros(model.size)
    value[is_leaf.to_numpy()] = rng.integers(50, 500, int(is_leaf.sum())).astype(float)
    empty_cell = int(np.flatnonzero(((codes["region"] == "S2") & (codes["size"] == "3")).to_numpy())[0])
    value[empty_cell] = 0.0
    # totals from leaves: solve by repeated aggregation over the relations
    A = model.relations.tocsr()
    for _ in range(6):
        for r in range(A.shape[0]):
            s, e = A.indptr[r], A.indptr[r + 1]
            cols, coef = A.indices[s:e], A.data[s:e]
            tot = cols[coef < 0][0]
            value[tot] = value[cols[coef > 0]].sum()
    status = np.array(["S"] * model.size, dtype="<U1")
    status[empty_cell] = "Z"
    sens = [
        int(np.flatnonzero(((codes["region"] == "N1") & (codes["size"] == "2")).to_numpy())[0]),
        int(np.flatnonzero(((codes["region"] == "S1") & (codes["size"] == "1")).to_numpy())[0]),
    ]
    status[sens] = "U"
    upl = np.zeros(model.size)
    upl[sens] = 0.2 * value[sens]
    rule = np.array([""] * model.size, dtype=object)
    rule[sens] = "p"
    contributors = np.where(status == "Z", 0, 5)
    contributors[sens] = 2
    return Problem.from_arrays(
        value,
        model.relations,
        status=status,
        names=model.cell_names(),
        upl=upl,
        lpl=upl.copy(),
        codes=codes,
        model=model,
        contributors=contributors,
        rule=rule,
    )


@dataclass
class HandAudit:
    """An audit result built by hand (lower, upper, verdict arrays) for report tests."""

    lower: np.ndarray
    upper: np.ndarray
    verdict: np.ndarray

    @property
    def ok(self) -> bool:
        v = self.verdict[self.verdict != ""]
        return bool((v == "protected").all())

    def summary(self) -> str:
        return f"{(self.verdict == 'protected').sum()} protected"

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"lower": self.lower, "upper": self.upper, "verdict": self.verdict})


def hand_audit(problem: Problem, withheld: np.ndarray, *, widen: float = 2.0) -> HandAudit:
    """Intervals: published cells exact; withheld cells value -/+ widen x their levels
    (or 30% of the value); verdicts for sensitive cells from those intervals."""
    v = problem.value
    half = np.where(problem.upl > 0, widen * problem.upl, 0.3 * np.abs(v))
    lower = np.where(withheld, np.maximum(v - half, 0), v)
    upper = np.where(withheld, v + half, v)
    verdict = np.array([""] * problem.n, dtype=object)
    sens = problem.sensitive
    ok = (upper >= v + problem.upl) & (lower <= v - problem.lpl)
    verdict[sens] = np.where(ok[sens], "protected", "exact")
    return HandAudit(lower, upper, verdict)


def small_jj(path) -> str:
    """Write :func:`small_problem` as a JJ file and return its path."""
    from tablesafe.io.jj import write_jj

    write_jj(small_problem(), path)
    return str(path)


def require_stages(*names: str) -> None:
    """Assert that the named pipeline stages are installed and documented.

    (Once a skip guard while the stages landed in parallel; now a missing stage fails the
    test.) Names: ``tabulate``, ``rules`` (assess), ``suppress``, ``audit``, ``from_tabular``.
    """
    import importlib


    where = {
        "tabulate": ("tablesafe.tabulate", "tabulate"),
        "from_tabular": ("tablesafe.tabulate", "from_tabular"),
        "rules": ("tablesafe.rules", "assess"),
        "suppress": ("tablesafe.suppress", "suppress"),
        "audit": ("tablesafe.audit", "audit"),
    }
    for n in names:
        mod, fn = where[n]
        try:
            f = getattr(importlib.import_module(mod), fn, None)
            ok = callable(f) and bool(getattr(f, "__doc__", None))  # a bare stub has no docstring
        except ImportError:
            ok = False
        if not ok:
            raise AssertionError(f"stage {mod}.{fn} is not installed")
