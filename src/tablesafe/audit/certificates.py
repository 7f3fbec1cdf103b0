"""Protection certificates: feasible tables that prove each sensitive cell's protection.

A certificate for a sensitive cell (the *target*) and a direction (``up``/``down``) is a
table that differs from the true one only in withheld cells, respects the a priori
bounds and every relation, and moves the target by at least its protection level (up by
UPL, down by LPL capped at the distance to the lower a priori bound). It proves that the
attacker's feasibility interval (seed 002, "Secondary tabular data protection methods")
reaches that far, and checking it costs one pass over the relations.

Format (DataFrame or Parquet): columns ``target``, ``direction``, ``cell``, ``value``;
cells named by ``Problem.names``; only the withheld cells whose value differs from the
truth are listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.audit.intervals import as_mask, solve_intervals
from tablesafe.audit.result import REL_TOL
from tablesafe.errors import InputError
from tablesafe.problem import Problem

COLUMNS = ("target", "direction", "cell", "value")
INSIDER_GAP = "every certificate moves"
"""Start of the reason of a failure found only by the insider check (``insiders=``)."""


class CertificateFailure(NamedTuple):
    """One certificate that does not prove what it should (or is missing)."""

    target: str
    direction: str
    reason: str


def required_moves(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """How far up and down each sensitive cell must be movable (0 elsewhere).

    Down moves are capped at the distance to the lower a priori bound (DESIGN
    "Semantics"). A sensitive cell whose levels are all zero must still not be exact;
    it then needs an ``up`` certificate with any positive move (required move ``0``).
    """
    sens = problem.sensitive
    up = np.where(sens, problem.upl, 0.0)
    down = np.where(sens, np.minimum(problem.lpl, problem.value - problem.lower), 0.0)
    return up, np.maximum(down, 0.0)


def _directions(problem: Problem) -> list[tuple[int, str]]:
    """(cell, direction) pairs that need a certificate."""
    up, down = required_moves(problem)
    sens = np.flatnonzero(problem.sensitive)
    out: list[tuple[int, str]] = []
    for i in sens:
        need_up = up[i] > 0 or (down[i] <= 0)
        if need_up:
            out.append((int(i), "up"))
        if down[i] > 0:
            out.append((int(i), "down"))
    return out


def make_certificates(problem: Problem, withheld, *, intervals=None) -> pd.DataFrame:
    """Certificates from the audit LPs, one table per sensitive cell and direction.

    Each is the table closest to the truth (fewest, smallest changes) that moves the
    cell by exactly its protection level, found by an LP warm-started per block; cells
    with a zero level fall back to the argmax/argmin table of the interval LPs.

    A certificate is written only where the optimal table reaches the required move
    (a protected direction); :func:`check_certificates` reports the others as missing.
    For an unbounded direction the block LP is re-solved with the target capped at
    ``value + UPL`` so the certificate is a finite table.
    """
    mask = as_mask(problem, withheld)
    res = intervals if intervals is not None else solve_intervals(
        problem, mask, cells=problem.sensitive & mask, keep_points=True, certify=True)
    up, down = required_moves(problem)
    tol = REL_TOL * np.maximum(1.0, np.abs(problem.value))
    rows: list[tuple[str, str, np.ndarray, np.ndarray]] = []
    names = problem.names
    for i, d in _directions(problem):
        if not mask[i]:
            continue
        sign = 1 if d == "up" else -1
        need = up[i] if d == "up" else down[i]
        key = (i, sign)
        pt = res.moves.get(key, res.points.get(key))
        if pt is None and sign == 1 and np.isinf(res.upper[i]) and res.block[i] >= 0:
            pt = _capped_point(problem, res, i, problem.value[i] + max(up[i], 1.0))
        if pt is None:
            continue
        cols, vals = pt
        pos = np.flatnonzero(cols == i)
        moved = (vals[pos[0]] - problem.value[i]) * sign if pos.size else 0.0
        if moved < need - tol[i] or (need <= 0 and moved <= tol[i]):
            continue
        rows.append((names[i], d, names[cols], vals))
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=object if c != "value" else float)
                             for c in COLUMNS})
    lens = [len(r[2]) for r in rows]
    return pd.DataFrame({
        "target": np.repeat([r[0] for r in rows], lens).astype(object),
        "direction": np.repeat([r[1] for r in rows], lens).astype(object),
        "cell": np.concatenate([r[2] for r in rows]).astype(object),
        "value": np.concatenate([r[3] for r in rows]).astype(float),
    })


def _factor(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, categories as strings) of a column; code -1 for a missing value."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy().astype(np.int64), col.cat.categories.astype(str).to_numpy()
    codes, cats = pd.factorize(col.astype(str))
    return codes.astype(np.int64), np.asarray(cats, dtype=object).astype(str)


def _positions(index: pd.Series, codes: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """Cell positions (float, NaN if unknown) of coded names."""
    pos = index.reindex(cats).to_numpy().astype(float) if len(cats) else np.zeros(0)
    out = np.full(len(codes), np.nan)
    have = codes >= 0
    out[have] = pos[codes[have]]
    return out


def _capped_point(problem: Problem, res, i: int, cap: float):
    """Optimal table of ``max x_i`` with ``x_i <= cap`` in its block (for unbounded cells)."""
    b = res.blocks[int(res.block[i])]
    k = int(np.flatnonzero(b.cols == i)[0])
    b.set_bounds(np.array([k]), np.array([b.lower[k]]), np.array([cap]))
    try:
        _, x = b.optimise(k, 1)
    finally:
        b.set_bounds(np.array([k]), np.array([b.lower[k]]), np.array([b.upper[k]]))
    if x is None:
        return None
    diff = np.abs(x - b.truth) > 1e-9 * (1 + np.abs(b.truth))
    return b.cols[diff], x[diff]


def check_certificates(problem: Problem, withheld, certificates: pd.DataFrame | str,
                       *, rel_tol: float = REL_TOL, insiders=None) -> list[CertificateFailure]:
    """Check certificates in one vectorised pass; return what fails or is missing.

    Args:
        problem: the true table.
        withheld: pattern, mask, indices or names of withheld cells.
        certificates: DataFrame (or path of a Parquet file) with columns ``target``,
            ``direction`` (``up``/``down``), ``cell``, ``value``.
        rel_tol: relative tolerance for relations, bounds and moves.
        insiders: optional mask (or ``True`` for the single-contributor cells of
            ``problem.contributors``; ``None`` or ``False``: no insider check) of cells
            whose respondent knows their value. For
            every withheld insider cell ``s`` and every target ``t`` it does not overlap
            (see :class:`tablesafe.structure.overlap.CellOverlap`), some valid
            certificate of ``t`` and each direction must leave ``s`` unchanged:
            otherwise that respondent can rule out every certificate (seed 002,
            "singletons"). Certificates may list several tables per target and
            direction (the optional ``insider`` column says which respondent each one
            is for; the check does not rely on it).

    Returns:
        A list of :class:`CertificateFailure` ``(target, direction, reason)``: for each
        certificate that changes a published cell, names an unknown cell, breaks a
        bound or a relation, or moves its target too little; for each sensitive cell
        and needed direction without a certificate (reason ``missing``); for a cell
        with no levels that no certificate moves; and (direction ``sliding``) for a
        cell whose up and down certificates together span less than its sliding level.
    """
    cert = _read_certificates(certificates)
    mask = as_mask(problem, withheld)
    rows = _encode(problem, cert)
    verdicts = _Verdicts(rows.g)
    d = _check_tables(problem, mask, rows, verdicts, rel_tol)
    up, down = required_moves(problem)
    best_up, best_down, present = _check_moves(problem, rows, verdicts, d, up, down, rel_tol)
    failures = [CertificateFailure(str(cert["target"][rows.first[grp]]), str(rows.gdir[grp]), verdicts.reasons[grp])
                for grp in np.flatnonzero(verdicts.bad).tolist()]
    if insiders is not None and insiders is not False and rows.g:
        failures.extend(_insider_gaps(problem, mask, insiders, rows.ok, rows.tgt, rows.cel, rows.dev, rows.codes,
                                      verdicts.bad | rows.unknown[np.maximum(rows.first, 0)], rows.first, rows.gdir,
                                      rel_tol))
    failures.extend(_uncertified(problem, mask, present, up, down, best_up, best_down, rel_tol))
    return failures


def _read_certificates(certificates: pd.DataFrame | str) -> pd.DataFrame:
    """The certificates frame (read from Parquet when a path), with its columns checked."""
    if isinstance(certificates, (str, bytes)) or hasattr(certificates, "__fspath__"):
        certificates = pd.read_parquet(certificates)
    missing_cols = [c for c in COLUMNS if c not in certificates.columns]
    if missing_cols:
        raise InputError(f"certificates lack columns {missing_cols}")
    return certificates.reset_index(drop=True)


class _Verdicts:
    """Per certificate group (one table): whether it failed, and the first reason why."""

    def __init__(self, g: int) -> None:
        self.bad = np.zeros(g, dtype=bool)
        self.reasons: dict[int, str] = {}

    def flag(self, grp: int, reason: str) -> None:
        """Fail group ``grp`` for ``reason`` unless it failed already."""
        if not self.bad[grp]:
            self.bad[grp] = True
            self.reasons[int(grp)] = reason


@dataclass(frozen=True)
class _Rows:
    """The certificate rows as positions: per row its target, cell and group (one group per
    target, direction and insider: one table), and per group its first row."""

    cert: pd.DataFrame
    tgt: np.ndarray       # target position per row (0 where unknown)
    cel: np.ndarray       # cell position per row (0 where unknown)
    ok: np.ndarray        # rows whose target, cell and direction are known
    bad_dir: np.ndarray   # rows with a direction other than up or down
    codes: np.ndarray     # group of each row
    first: np.ndarray     # first row of each group
    gdir: np.ndarray      # direction of each group
    vals: np.ndarray      # the certificate's value of the cell
    dev: np.ndarray       # its deviation from the true value (0 where unknown or not finite)
    unknown: np.ndarray   # ~ok, computed once (a property here was recomputed per group: hours on 1M cells)

    @property
    def g(self) -> int:
        return len(self.first)


def _encode(problem: Problem, cert: pd.DataFrame) -> _Rows:
    """Integer codes per column (categorical columns, as ``fast`` writes them, are never
    turned into millions of strings) and the groups of rows."""
    index = pd.Series(np.arange(problem.n), index=pd.Index(problem.names.astype(str)))
    t_codes, t_cats = _factor(cert["target"])
    c_codes, c_cats = _factor(cert["cell"])
    d_codes, d_cats = _factor(cert["direction"])
    d_cats = np.array([str(x).lower() for x in d_cats], dtype=object)
    tgt = _positions(index, t_codes, t_cats)
    cel = _positions(index, c_codes, c_cats)
    bad_dir = ~np.isin(d_cats, ["up", "down"])[d_codes] if len(d_cats) else np.ones(len(cert), dtype=bool)
    bad_dir |= d_codes < 0
    unknown = np.isnan(tgt) | np.isnan(cel) | bad_dir
    key = (t_codes + 1) * (len(d_cats) + 1) + (d_codes + 1)
    if "insider" in cert.columns:
        i_codes, i_cats = _factor(cert["insider"].fillna("") if not isinstance(
            cert["insider"].dtype, pd.CategoricalDtype) else cert["insider"])
        key = key * (len(i_cats) + 1) + (i_codes + 1)
    codes, uniq = pd.factorize(key)
    g = len(uniq)
    ok = ~unknown
    cel_i = np.where(ok, cel, 0).astype(int)
    vals = cert["value"].to_numpy(dtype=float)
    first = np.full(g, -1)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    gdir = d_cats[d_codes[first]] if len(d_cats) else np.full(g, "", dtype=object)
    return _Rows(cert=cert, tgt=np.where(ok, tgt, 0).astype(int), cel=cel_i, ok=ok, bad_dir=bad_dir, codes=codes,
                 first=first, gdir=gdir, vals=vals,
                 dev=np.where(ok & np.isfinite(vals), vals - problem.value[cel_i], 0.0), unknown=unknown)


def _check_tables(problem: Problem, mask: np.ndarray, rows: _Rows, verdicts: _Verdicts,
                  rel_tol: float) -> sp.csc_matrix:
    """Fail the tables that name unknown cells, change a published cell, break a bound or a
    relation; return the deviations (cells x groups)."""
    cert, codes, cel_i, vals = rows.cert, rows.codes, rows.cel, rows.vals
    for r in np.flatnonzero(rows.unknown):
        verdicts.flag(codes[r], f"unknown direction {cert['direction'][r]!r}" if rows.bad_dir[r]
                      else f"unknown cell {cert['cell'][r]!r} or target")
    for r in np.flatnonzero(rows.ok & ~mask[cel_i]):
        verdicts.flag(codes[r], f"changes published cell {problem.names[cel_i[r]]}")
    scale = rel_tol * np.maximum(1.0, np.abs(problem.value[cel_i]))
    with np.errstate(invalid="ignore"):
        out_b = rows.ok & ((vals < problem.lower[cel_i] - scale) | (vals > problem.upper[cel_i] + scale)
                           | ~np.isfinite(vals))
    for r in np.flatnonzero(out_b):
        verdicts.flag(codes[r], f"cell {problem.names[cel_i[r]]} = {vals[r]:g} outside "
                                f"[{problem.lower[cel_i[r]]:g}, {problem.upper[cel_i[r]]:g}]")
    d = sp.csc_matrix((rows.dev, (cel_i, codes)), shape=(problem.n, rows.g))
    d.sum_duplicates()
    a = problem.relations
    resid = sp.csc_matrix(a @ d)
    row_scale = rel_tol * (1.0 + abs(a) @ np.abs(problem.value))
    resid.data = np.where(np.abs(resid.data) > row_scale[resid.indices], resid.data, 0.0)
    resid.eliminate_zeros()
    for grp in np.flatnonzero(np.diff(resid.indptr) > 0).tolist():
        row = resid.indices[resid.indptr[grp]]
        verdicts.flag(grp, f"relation {int(row)} violated by {resid.data[resid.indptr[grp]]:g}")
    return d


def _check_moves(problem: Problem, rows: _Rows, verdicts: _Verdicts, d: sp.csc_matrix, up: np.ndarray,
                 down: np.ndarray, rel_tol: float) -> tuple[np.ndarray, np.ndarray, set[tuple[int, str]]]:
    """Fail the tables whose target is not sensitive or moves too little; return the
    largest valid move per cell up and down, and the (target, direction) pairs present."""
    g = rows.g
    gt = np.where(rows.first >= 0, rows.tgt[rows.first], 0)
    dense_move = np.asarray(d[gt, np.arange(g)]).ravel() if g else np.zeros(0)
    best_up = np.zeros(problem.n)
    best_down = np.zeros(problem.n)
    present: set[tuple[int, str]] = set()
    sensitive = problem.sensitive
    for grp in range(g):
        if rows.unknown[rows.first[grp]]:
            continue
        t = int(gt[grp])
        present.add((t, str(rows.gdir[grp])))
        if verdicts.bad[grp]:
            continue
        if not sensitive[t]:
            verdicts.flag(grp, "target is not a sensitive cell")
            continue
        sign = 1.0 if rows.gdir[grp] == "up" else -1.0
        need = up[t] if sign > 0 else down[t]
        moved = sign * dense_move[grp]
        if moved < need - rel_tol * max(1.0, abs(problem.value[t])):
            verdicts.flag(grp, f"moves the target by {moved:g}, needs {need:g}")
            continue
        if sign > 0:
            best_up[t] = max(best_up[t], moved)
        else:
            best_down[t] = max(best_down[t], moved)
    return best_up, best_down, present


def _uncertified(problem: Problem, mask: np.ndarray, present: set[tuple[int, str]], up: np.ndarray,
                 down: np.ndarray, best_up: np.ndarray, best_down: np.ndarray,
                 rel_tol: float) -> list[CertificateFailure]:
    """Sensitive cells without a certificate for a needed direction, without any move, or
    whose certificates span less than their sliding level."""
    failures = []
    tol_all = rel_tol * np.maximum(1.0, np.abs(problem.value))
    for i in np.flatnonzero(problem.sensitive):
        name = str(problem.names[i])
        why = "missing (cell is published)" if not mask[i] else "missing"
        if up[i] > 0 and (i, "up") not in present:
            failures.append(CertificateFailure(name, "up", why))
        if down[i] > 0 and (i, "down") not in present:
            failures.append(CertificateFailure(name, "down", why))
        if up[i] <= 0 and down[i] <= 0 and max(best_up[i], best_down[i]) <= tol_all[i]:
            if (i, "up") not in present and (i, "down") not in present:
                failures.append(CertificateFailure(name, "up", why))
            else:
                failures.append(CertificateFailure(name, "up", "no certificate moves the cell"))
        spl = problem.spl[i]
        if spl > 0 and best_up[i] + best_down[i] < spl - tol_all[i]:
            failures.append(CertificateFailure(
                name, "sliding", f"certificates span {best_up[i] + best_down[i]:g}, needs {spl:g}"))
    return failures


def _insider_gaps(problem: Problem, mask: np.ndarray, insiders, ok: np.ndarray, tgt: np.ndarray,
                  cel: np.ndarray, dev: np.ndarray, codes: np.ndarray, invalid: np.ndarray,
                  first: np.ndarray, gdir: np.ndarray, rel_tol: float) -> list[CertificateFailure]:
    """(target, direction) pairs all of whose valid certificates move one insider cell
    (``gdir``: the direction of each certificate group)."""
    from tablesafe.structure.insiders import InsiderModel, single_respondents

    if insiders is True:
        if problem.contributors is None:
            return []
        ins = single_respondents(problem)
    else:
        ins = as_mask(problem, insiders)
    ins = ins & mask
    g = len(first)
    # (target, direction) of every certificate group, and how many valid groups each has
    td_of_group = pd.factorize(pd.Series(tgt[first]).astype(str) + "\x00" + pd.Series(gdir).astype(str))[0]
    nvalid = np.bincount(td_of_group[~invalid], minlength=int(td_of_group.max()) + 1)
    moved = ok & ins[cel] & (cel != tgt) & (np.abs(dev) > rel_tol * np.maximum(1.0, np.abs(problem.value[cel])))
    moved &= ~invalid[codes]
    if not moved.any():
        return []
    pairs = pd.DataFrame({"td": td_of_group[codes[moved]], "cell": cel[moved], "grp": codes[moved]})
    pairs = pairs.drop_duplicates(["grp", "cell"])
    count = pairs.groupby(["td", "cell"], sort=True).size().reset_index(name="n")
    gap = count[count["n"].to_numpy() >= nvalid[count["td"].to_numpy()]]
    if gap.empty:
        return []
    rep = np.full(len(nvalid), -1)
    rep[td_of_group[::-1]] = np.arange(g)[::-1]
    grp = rep[gap["td"].to_numpy()]
    t = tgt[first[grp]]
    s_cells = gap["cell"].to_numpy()
    model = InsiderModel.of(problem)
    inside = np.array([model.overlaps(np.array([c]), int(tt))[0] for tt, c in zip(t, s_cells)],
                      dtype=bool)
    out = []
    for k in np.flatnonzero(~inside):
        out.append(CertificateFailure(
            str(problem.names[t[k]]), str(gdir[grp[k]]),
            f"{INSIDER_GAP} {problem.names[s_cells[k]]}, whose single respondent knows its value"))
    return out
