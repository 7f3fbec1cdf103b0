"""Cells that are copies of one another, protected once.

A code whose parent has no other child is its parent: in every cell of the table the two
codes give the same contributors and the same value, and a relation ``parent = child``
ties them. Real classifications have many such codes: in tau-ARGUS's test data
``tau_testW`` (IndustryCode, hierarchy digits 3 1 1) 250 of the 268 four-digit groups
have a single five-digit class, so 5,865 of the 12,070 cells of IndustryCode x Region
copy another cell. Withholding one copy and publishing the other discloses it, so a
pattern withholds all copies of a cell or none.

:func:`collapse_twins` drops those codes from the hierarchies (their children move up
to the parent kept) and gives a problem with one cell per set of copies: the sum of
their costs, the strictest of their bounds and levels. Every table of it is a table of
the original problem with each copy at its cell's value, and back: a certificate moves
all copies alike, so the pattern and certificates of the smaller problem carry over
(:meth:`Twins.expand`, :meth:`Twins.expand_certificates`). The final audit still runs
on the original problem.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from tablesafe.problem import PRIMARY, SAFE, SENSITIVE, Pattern, Problem
from tablesafe.structure import CompiledModel
from tablesafe.structure.hierarchy import Hierarchy
from tablesafe.structure.table import Dimension, join_codes
from tablesafe.suppress.proof import AUDIT_STAT, final_audit, proven_by_certificates


@dataclass(frozen=True)
class Twins:
    """A problem with each set of copies as one cell, and the way back.

    Attributes:
        problem: the smaller problem.
        rep: per cell of the original problem, its cell in :attr:`problem`.
        merged: how many cells of the original problem are copies of another.
    """

    problem: Problem
    rep: np.ndarray
    merged: int

    def expand(self, withheld: np.ndarray) -> np.ndarray:
        """The original problem's pattern of a pattern of the smaller one."""
        return np.asarray(withheld, dtype=bool)[self.rep]

    def expand_certificates(self, certs: pd.DataFrame | None, original: Problem) -> pd.DataFrame | None:
        """Certificates of the smaller problem as certificates of ``original``: each row
        for a cell repeated for every copy of it (the copies move alike; a copy's value
        equals its cell's), and each table repeated for every sensitive copy of its
        target. An ``insider`` column stays as it is: the smaller problem's cells keep
        the names of cells of ``original``."""
        if certs is None or not len(certs):
            return certs
        names = original.names.astype(str)
        # copies of each small cell, as (small cell, original cell) pairs
        small = self.problem.names[self.rep].astype(str)
        members = pd.DataFrame({"small": small, "cell_orig": names})
        sens = pd.DataFrame({"small": small, "target_orig": names})[original.sensitive]
        out = certs.copy()
        out["_row"] = np.arange(len(out))
        out = out.merge(members, left_on="cell", right_on="small", how="inner").drop(columns="small")
        out = out.merge(sens, left_on="target", right_on="small", how="inner").drop(columns="small")
        out = out.sort_values(["target_orig", "_row", "cell_orig"], kind="stable")
        out["target"] = out.pop("target_orig")
        out["cell"] = out.pop("cell_orig")
        return out.drop(columns="_row").reset_index(drop=True)


def collapse_twins(problem: Problem, relations_only: bool = False) -> Twins | None:
    """The problem with one cell per set of copies (module docstring); ``None`` when no
    cell copies another, or when the copies do not agree (values, statuses other than
    safe and sensitive, contributor counts, offsets of the relations): the problem is
    then solved as it is.

    A table keeps its structure: the codes without siblings leave the hierarchies. A
    problem without one (relations only, as Castro's JJ instances) is merged only with
    ``relations_only`` (:data:`~tablesafe.suppress.dispatch.MERGE_RELATION_COPIES`): the
    cells of each relation ``x_i - x_j = 0``, and the smaller problem has relations only
    too."""
    if problem.n == 0:
        return None
    model = problem.model
    if model is None or model.size != problem.n:
        return _relation_twins(problem) if relations_only else None
    if np.any(problem.rhs != 0):
        return None
    dims = []
    up_maps = {}
    for d in model.dims:
        h, up = _collapsed(d.hierarchy)
        dims.append(Dimension(d.name, h))
        up_maps[d.name] = up
    if not any(up_maps.values()):
        return None
    kept_codes = pd.DataFrame({
        d.name: model.codes[d.name].astype(str).map(lambda c, m=up_maps[d.name]: m.get(c, c)) for d in model.dims
    })
    rep_cell = pd.Index(problem.names.astype(str)).get_indexer(join_codes(kept_codes).astype(str))
    if (rep_cell < 0).any():
        return None
    reps, rep = np.unique(rep_cell, return_inverse=True)
    if len(reps) == problem.n:
        return None
    record_cells = None
    if problem.record_cells is not None:
        record_cells = problem.record_cells.copy()
        for name, up in up_maps.items():
            if name in record_cells and up:
                record_cells[name] = record_cells[name].astype(str).map(lambda c, u=up: u.get(c, c))
        record_cells = record_cells.drop_duplicates().reset_index(drop=True)

    def small_model(rel: sp.csr_matrix) -> CompiledModel:
        return CompiledModel(dims=tuple(dims), codes=kept_codes.iloc[reps].reset_index(drop=True), relations=rel,
                             table_cells=tuple(np.unique(rep[np.asarray(t, dtype=np.int64)])
                                               for t in model.table_cells))
    small = _merged_problem(problem, reps, rep, small_model, record_cells)
    return None if small is None else Twins(small, rep.astype(np.int64), problem.n - len(reps))


def _relation_twins(problem: Problem) -> Twins | None:
    """:func:`collapse_twins` of a problem without table structure: the cells of each
    relation ``a x_i - a x_j = 0`` are one."""
    rel = sp.csr_matrix(problem.relations)
    two = np.flatnonzero(np.diff(rel.indptr) == 2)
    if not len(two):
        return None
    first = rel.data[rel.indptr[two]]
    second = rel.data[rel.indptr[two] + 1]
    pair = (np.abs(first + second) <= 1e-12 * np.abs(first)) & (problem.rhs[two] == 0)
    two = two[pair]
    if not len(two):
        return None
    i = rel.indices[rel.indptr[two]]
    j = rel.indices[rel.indptr[two] + 1]
    g = sp.csr_matrix((np.ones(len(two)), (i, j)), shape=(problem.n, problem.n))
    _, label = connected_components(g, directed=False)
    # each set of copies is represented by its first cell, the sets in the order of it
    _, first_cell, inverse = np.unique(label, return_index=True, return_inverse=True)
    order = np.argsort(first_cell, kind="stable")
    reps = first_cell[order]
    renum = np.empty_like(order)
    renum[order] = np.arange(len(order))
    rep = renum[inverse]
    small = _merged_problem(problem, reps, rep, None, None)
    return None if small is None else Twins(small, rep.astype(np.int64), problem.n - len(reps))


def _collapsed(h: Hierarchy) -> tuple[Hierarchy, dict[str, str]]:
    """``h`` without the codes whose parent has no other child, and each dropped code's
    nearest ancestor kept (empty when nothing is dropped, or when the hierarchy would
    shrink to its total)."""
    keep_of: list[int] = []  # per code: the code kept for it
    up: dict[str, str] = {}
    for i, c in enumerate(h.codes):
        p = h.parent[i]
        if p >= 0 and len(h.children(p)) == 1:
            keep_of.append(keep_of[p])
            up[c] = h.codes[keep_of[p]]
        else:
            keep_of.append(i)
    if not up or len(up) == len(h.codes) - 1:
        return h, {}
    tree: dict[str, list[str]] = {}
    for i, c in enumerate(h.codes):
        if c in up:
            continue
        p = h.parent[i]
        if p >= 0:
            tree.setdefault(h.codes[keep_of[p]], []).append(c)
    return Hierarchy.from_tree(h.total, tree), up


def _merged_problem(problem: Problem, reps: np.ndarray, rep: np.ndarray,
                    small_model: Callable[[sp.csr_matrix], CompiledModel] | None,
                    record_cells: pd.DataFrame | None) -> Problem | None:
    """The problem with cell ``reps[j]`` standing for every cell ``i`` with ``rep[i] == j``
    (``small_model``: its table structure from its relations, if it has one)."""
    k = len(reps)
    v = problem.value
    if not np.allclose(v, v[reps][rep], rtol=1e-9, atol=1e-9):
        return None
    status = problem.status.astype(str)
    sens = np.isin(status, SENSITIVE)
    any_sens = np.bincount(rep, weights=sens, minlength=k) > 0
    plain = status[reps][rep]
    # copies must agree, except that a safe copy of a sensitive cell becomes sensitive
    agree = (status == plain) | (np.isin(status, (SAFE, *SENSITIVE)) & np.isin(plain, (SAFE, *SENSITIVE)))
    if not agree.all():
        return None
    if problem.contributors is not None:
        cn = np.asarray(problem.contributors)
        if not np.array_equal(cn, cn[reps][rep]):
            return None
    new_status = status[reps].copy()
    lift = any_sens & ~np.isin(new_status, SENSITIVE)
    new_status[lift] = PRIMARY
    m = sp.csr_matrix((np.ones(problem.n), (np.arange(problem.n), rep)), shape=(problem.n, k))
    kept = _distinct_rows(sp.csr_matrix(problem.relations @ m), problem.rhs)
    if kept is None:
        return None
    rel, rhs = kept

    def most(a: np.ndarray) -> np.ndarray:
        out = np.full(k, -np.inf)
        np.maximum.at(out, rep, a)
        return out

    def least(a: np.ndarray) -> np.ndarray:
        out = np.full(k, np.inf)
        np.minimum.at(out, rep, a)
        return out

    cost = np.bincount(rep, weights=problem.cost.astype(float), minlength=k)
    return problem.copy(
        names=problem.names[reps],
        value=v[reps],
        cost=cost,
        status=new_status,
        lower=most(problem.lower.astype(float)),
        upper=least(problem.upper.astype(float)),
        upl=most(problem.upl.astype(float)),
        lpl=most(problem.lpl.astype(float)),
        spl=most(problem.spl.astype(float)),
        relations=rel,
        rhs=rhs,
        codes=None if problem.codes is None else problem.codes.iloc[reps].reset_index(drop=True),
        contributors=None if problem.contributors is None else np.asarray(problem.contributors)[reps],
        rule=None if problem.rule is None else problem.rule[reps],
        model=None if small_model is None else small_model(rel),
        capacity=None if problem.capacity is None else least(np.asarray(problem.capacity, dtype=float)),
        contributions=None,
        record_cells=record_cells,
    )


def _distinct_rows(rel: sp.csr_matrix, rhs: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray] | None:
    """``rel`` (with right-hand sides ``rhs``) without its empty rows and without repeats
    of a row (up to its sign); ``None`` when an empty row or a repeat has another
    right-hand side (copies whose relations carry different offsets)."""
    rel.sum_duplicates()
    rel.eliminate_zeros()
    rel.sort_indices()
    seen: dict[tuple, float] = {}
    keep = []
    for r in range(rel.shape[0]):
        s, e = rel.indptr[r], rel.indptr[r + 1]
        if s == e:
            if rhs[r] != 0:
                return None
            continue
        val = rel.data[s:e]
        sign = 1.0 if val[0] > 0 else -1.0
        key = (rel.indices[s:e].tobytes(), (sign * val).tobytes())
        if key in seen:
            if seen[key] != sign * rhs[r]:
                return None
            continue
        seen[key] = sign * rhs[r]
        keep.append(r)
    rows = np.asarray(keep, dtype=np.int64)
    return sp.csr_matrix(rel[rows]), np.asarray(rhs, dtype=float)[rows]


def suppress_merged(twins: Twins, problem: Problem, run: Callable[[Problem], Pattern], *, audit: bool,
                    certificates: bool, seconds_from: float) -> Pattern:
    """Protect ``problem`` through its smaller problem: ``run`` suppresses ``twins.problem``
    (no final audit there, certificates kept); its pattern is expanded to every copy and
    proved on ``problem`` itself: its certificates, expanded, checked in one pass, or the
    independent LP audit. ``seconds_from``: the ``time.monotonic()`` the run started. The
    stats keep the smaller problem's counts; the caller puts the pattern's own in."""
    small = run(twins.problem)
    withheld = twins.expand(small.withheld)
    stats = dict(small.stats or {})
    stats["copies_merged"] = twins.merged
    stats["cells_solved"] = twins.problem.n
    certs = twins.expand_certificates(small.certificates, problem)
    passed = None
    proven = False
    if small.proof == "certificates" and certs is not None:
        check: dict = {}
        proven, _, _ = proven_by_certificates(problem, withheld, certs, check, False)
    if audit and not proven:
        passed = final_audit(problem, withheld)
    proof = "certificates" if proven else ("audit" if passed is not None else "")
    stats.update(audit=AUDIT_STAT[proof], seconds=time.monotonic() - seconds_from)
    return Pattern(withheld, method=small.method, stats=stats, certificates=certs if certificates else None,
                   proof=proof, audit=passed)
