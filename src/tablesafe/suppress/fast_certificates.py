"""One-pass check of protection certificates.

A certificate for a sensitive cell ``t`` and a direction is a table that agrees with every
published cell, satisfies the relations and the a priori bounds, and puts ``t`` at least
its upper protection level above (``up``) or its lower level below (``down``) its true
value. It lists only the withheld cells whose value differs from the truth. If such a
table exists, the attacker's feasibility interval for ``t`` reaches that far, whatever else
is withheld: a set of certificates proves a pattern safe without an LP per cell
(DESIGN.md, "Performance habits").

This module is the stand-in used by the ``fast`` method until the audit area's
``tablesafe.audit.check_certificates`` is available; :func:`check` dispatches to that one
when it exists, so there is a single checker in the end.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.problem import Problem

__all__ = ["check", "check_certificates"]


def check(problem: Problem, withheld: np.ndarray, certificates: pd.DataFrame) -> list[str]:
    """Check certificates with the audit area's checker if present, else with this module's."""
    try:
        from tablesafe.audit import check_certificates as audit_check  # type: ignore[attr-defined]
    except ImportError:
        audit_check = None
    if audit_check is not None:
        return list(audit_check(problem, withheld, certificates))
    return check_certificates(problem, withheld, certificates)


def _required(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Upper and lower movement every sensitive cell needs (lower capped at its bound)."""
    sens = problem.sensitive
    v = problem.value
    upl = np.where(sens, np.maximum(problem.upl, 0.0), 0.0)
    lpl = np.where(sens, np.minimum(np.maximum(problem.lpl, 0.0), np.maximum(v - problem.lower, 0.0)), 0.0)
    return upl, lpl


def check_certificates(
    problem: Problem,
    withheld: np.ndarray,
    certificates: pd.DataFrame,
    *,
    rtol: float = 1e-6,
) -> list[str]:
    """Failures of a certificate set (an empty list means the pattern is proved safe).

    Checks, in one pass over the relations (one sparse product for all certificates):
    every listed cell is withheld and known; every certificate table satisfies the
    relations (``A x = rhs``) and the a priori bounds; every sensitive cell has an ``up``
    certificate reaching ``value + upl`` and a ``down`` certificate reaching
    ``value - lpl`` (lower level capped at the a priori lower bound), their spread covers
    the sliding level, and a sensitive cell with no level at all moves in some
    certificate (it is not exactly recalculable).

    Args:
        rtol: tolerance relative to the size of the values involved.
    """
    withheld = np.asarray(withheld, dtype=bool)
    n = problem.n
    v = problem.value
    failures: list[str] = []
    sens = problem.sensitive
    upl, lpl = _required(problem)
    names = pd.Index(np.asarray(problem.names).astype(str))
    if certificates is None or len(certificates) == 0:
        need = np.flatnonzero(sens)
        for i in need[:20]:
            failures.append(f"cell {names[i]}: no certificate")
        if len(need) > 20:
            failures.append(f"... and {len(need) - 20} more sensitive cells without certificates")
        return failures
    for col in ("target", "direction", "cell", "value"):
        if col not in certificates.columns:
            return [f"certificates have no column {col!r}"]
    tgt = names.get_indexer(certificates["target"].astype(str).to_numpy())
    cel = names.get_indexer(certificates["cell"].astype(str).to_numpy())
    direction = certificates["direction"].astype(str).to_numpy()
    val = certificates["value"].to_numpy(dtype=float)
    bad = (tgt < 0) | (cel < 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        failures.append(
            f"{int(bad.sum())} certificate rows name unknown cells "
            f"(first: target {certificates['target'].iloc[k]!s}, cell {certificates['cell'].iloc[k]!s})"
        )
        keep = ~bad
        tgt, cel, direction, val = tgt[keep], cel[keep], direction[keep], val[keep]
    baddir = ~np.isin(direction, ("up", "down"))
    if baddir.any():
        failures.append(f"{int(baddir.sum())} certificate rows have a direction other than up/down")
    notw = ~withheld[cel]
    if notw.any():
        k = int(np.flatnonzero(notw)[0])
        failures.append(
            f"{int(notw.sum())} certificate rows change published cells "
            f"(first: cell {names[cel[k]]} in the certificate of {names[tgt[k]]})"
        )
    scale = max(1.0, float(np.max(np.abs(v), initial=0.0)))
    atol = rtol * scale
    lo_bad = val < problem.lower[cel] - atol
    hi_bad = val > problem.upper[cel] + atol
    if (lo_bad | hi_bad).any():
        k = int(np.flatnonzero(lo_bad | hi_bad)[0])
        failures.append(
            f"{int((lo_bad | hi_bad).sum())} certificate values lie outside the a priori bounds "
            f"(first: cell {names[cel[k]]} = {val[k]:g} in the certificate of {names[tgt[k]]})"
        )
    # one column per (target, direction)
    key = tgt.astype(np.int64) * 2 + (direction == "down")
    ukey, col = np.unique(key, return_inverse=True)
    K = len(ukey)
    dev = val - v[cel]
    D = sp.csc_matrix((dev, (cel, col)), shape=(n, K))
    if D.nnz != len(dev):  # duplicate (certificate, cell) rows were summed
        D.sum_duplicates()
    dup = pd.DataFrame({"k": col, "c": cel}).duplicated().to_numpy()
    if dup.any():
        failures.append(f"{int(dup.sum())} certificate rows repeat a cell within one certificate")
    A = problem.relations
    R = (A @ D).tocsc()
    R.eliminate_zeros()
    colmax = np.asarray(abs(D).max(axis=0).todense()).ravel()
    if R.nnz:
        rc = np.repeat(np.arange(K), np.diff(R.indptr))
        viol = np.abs(R.data) > rtol * (1.0 + colmax[rc]) + 1e-9 * scale
        if viol.any():
            ks = np.unique(rc[viol])
            kt = ukey[ks[0]]
            failures.append(
                f"{len(ks)} certificates break the relations "
                f"(first: {names[kt // 2]} {'down' if kt % 2 else 'up'})"
            )
    # target movement per certificate
    ktarget = ukey // 2
    kdown = (ukey % 2).astype(bool)
    move = np.asarray(D[ktarget, np.arange(K)]).ravel()
    best_up = np.zeros(n)
    best_down = np.zeros(n)
    np.maximum.at(best_up, ktarget[~kdown], move[~kdown])
    np.maximum.at(best_down, ktarget[kdown], -move[kdown])
    tol_up = rtol * np.maximum(1.0, np.abs(v))
    short_up = sens & (upl > 0) & (best_up < upl - tol_up)
    short_down = sens & (lpl > 0) & (best_down < lpl - tol_up)
    nolevel = sens & (upl <= 0) & (lpl <= 0)
    spread = best_up + best_down
    short_slide = sens & (problem.spl > 0) & (spread < problem.spl - tol_up)
    exact = nolevel & (spread <= tol_up)
    for mask, what in (
        (short_up, "no certificate reaches value + upper protection level"),
        (short_down, "no certificate reaches value - lower protection level"),
        (short_slide, "certificates do not span the sliding protection level"),
        (exact, "no certificate moves the cell (exactly recalculable)"),
    ):
        idx = np.flatnonzero(mask)
        if len(idx):
            first = ", ".join(names[idx[:5]])
            failures.append(f"{len(idx)} sensitive cells: {what} (first: {first})")
    return failures
