"""An audit that shares no code with tablesafe's: one scipy ``linprog`` per bound.

For every audited sensitive cell ``k`` and direction, the attacker's LP over the whole
table: the published cells fixed at their values, the withheld cells free within their
a priori bounds, the relations ``A y = A value`` (as they hold for the true values).
The cell is under-protected when the LP cannot move it by its protection level (or it is
published). Only numpy, scipy and the problem's arrays are used, so a defect in
``tablesafe.audit`` cannot hide itself here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def plain_lp_check(problem, withheld: np.ndarray, sample: int | None = None, seed: int = 0) -> tuple[int, int]:
    """(under-protected, audited) sensitive cells by fresh LPs on the whole table."""
    sens = np.flatnonzero(problem.sensitive)
    if sample is not None and len(sens) > sample:
        sens = np.sort(np.random.default_rng(seed).choice(sens, size=sample, replace=False))
    w = np.asarray(withheld, dtype=bool)
    bad = int(np.sum(~w[sens]))
    sens = sens[w[sens]]
    a = sp.csr_matrix(problem.relations)
    value = np.asarray(problem.value, dtype=float)
    # values up to 1e11 (Castro's TOYSARAH) make HiGHS call a feasible LP infeasible:
    # work in power-of-two units (exact rescaling) so that the largest value is about 1e5
    big = float(np.abs(value).max()) if value.size else 0.0
    unit = 2.0 ** np.floor(np.log2(big / 1e5)) if big > 2.0**30 else 1.0
    value = value / unit
    rhs_all = a @ value
    cols = np.flatnonzero(w)
    aw = a[:, cols]
    ap = a[:, np.flatnonzero(~w)]
    rhs = rhs_all - ap @ value[~w]
    used = np.flatnonzero(np.diff(aw.tocsr().indptr) > 0)
    aw, rhs = aw[used], rhs[used]
    lo = np.asarray(problem.lower, dtype=float)[cols] / unit
    hi = np.asarray(problem.upper, dtype=float)[cols] / unit
    bounds = list(zip(np.where(np.isfinite(lo), lo, None), np.where(np.isfinite(hi), hi, None)))
    pos = {int(c): j for j, c in enumerate(cols)}
    scale = max(1.0, float(np.abs(value).max()))
    for k in sens:
        j = pos[int(k)]
        tol = 1e-6 * max(1.0, abs(value[k]))
        for sign, level in ((1.0, problem.upl[k] / unit), (-1.0, problem.lpl[k] / unit)):
            if level <= 0:
                continue
            c = np.zeros(len(cols))
            c[j] = -sign  # maximise sign * y_k
            res = linprog(c, A_eq=aw / 1.0, b_eq=rhs, bounds=bounds, method="highs")
            if res.status == 3:  # unbounded: protected
                continue
            if res.status != 0:
                raise RuntimeError(f"plain LP check: cell {problem.names[k]!r}: {res.message}")
            reach = sign * (res.x[j] - value[k])
            need = min(level, (hi[j] - value[k]) if sign > 0 else (value[k] - lo[j]))
            if reach < need - tol - 1e-9 * scale:
                bad += 1
                break
    return bad, len(sens) + int(np.sum(~w[np.flatnonzero(problem.sensitive)]))
