"""JJ files (tau-ARGUS's interchange format for the general model), read and written.

Layout: line 1 ``0``; line 2 the number of cells N; N lines
``i value cost status lb ub lpl upl spl`` (status ``s`` safe, ``u`` sensitive,
``z`` fixed or empty, ``p`` protected); then the number of relations M and M lines
``rhs k : j1 (c1) j2 (c2) ...``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from tablesafe.errors import InputError, NonAdditiveError
from tablesafe.problem import EMPTY, MANUAL, PRIMARY, PROTECTED, SAFE, SECONDARY, Problem

_READ_STATUS = {"s": SAFE, "u": PRIMARY, "z": EMPTY, "p": PROTECTED, "m": SECONDARY}
_WRITE_STATUS = {SAFE: "s", PRIMARY: "u", MANUAL: "u", EMPTY: "z", PROTECTED: "z", SECONDARY: "s"}


def read_jj(path: str | Path) -> Problem:
    """Read a JJ file into a :class:`Problem` (cells named by their index)."""
    name = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InputError(f"cannot read JJ file: {exc.strerror}", file=name) from None
    lines = [ln for ln in text.splitlines()]
    pos = 0

    def next_line() -> tuple[int, str]:
        nonlocal pos
        while pos < len(lines) and not lines[pos].strip():
            pos += 1
        if pos >= len(lines):
            raise InputError("unexpected end of file", file=name, line=pos)
        pos += 1
        return pos, lines[pos - 1]

    next_line()  # leading 0
    ln, s = next_line()
    try:
        n = int(s.split()[0])
    except (ValueError, IndexError):
        raise InputError("expected the number of cells", file=name, line=ln) from None
    value = np.zeros(n)
    cost = np.zeros(n)
    lower = np.zeros(n)
    upper = np.zeros(n)
    lpl = np.zeros(n)
    upl = np.zeros(n)
    spl = np.zeros(n)
    status = np.empty(n, dtype="<U1")
    for _ in range(n):
        ln, s = next_line()
        f = s.split()
        if len(f) < 9:
            raise InputError(f"cell line needs 9 fields, has {len(f)}", file=name, line=ln)
        try:
            i = int(f[0])
            value[i], cost[i] = float(f[1]), float(f[2])
            lower[i], upper[i] = float(f[4]), float(f[5])
            lpl[i], upl[i], spl[i] = float(f[6]), float(f[7]), float(f[8])
        except (ValueError, IndexError):
            raise InputError("non-numeric field or cell index out of range", file=name, line=ln) from None
        st = f[3].lower()
        if st not in _READ_STATUS:
            raise InputError(f"unknown status {f[3]!r}", file=name, line=ln)
        status[i] = _READ_STATUS[st]
    ln, s = next_line()
    m = int(s.split()[0])
    rows, cols, vals = [], [], []
    rhs = np.zeros(m)
    rel_lines = np.zeros(m, dtype=np.int64)
    for r in range(m):
        ln, s = next_line()
        rel_lines[r] = ln
        head, _, body = s.partition(":")
        try:
            rhs[r] = float(head.split()[0])
            toks = body.replace("(", " ").replace(")", " ").split()
            for j in range(0, len(toks), 2):
                rows.append(r)
                cols.append(int(toks[j]))
                vals.append(float(toks[j + 1]))
        except (ValueError, IndexError):
            raise InputError("malformed relation", file=name, line=ln) from None
    rel = sp.csr_matrix((vals, (rows, cols)), shape=(m, n))
    return Problem(
        names=np.array([str(i) for i in range(n)], dtype=object),
        value=value,
        cost=cost,
        status=status,
        lower=lower,
        upper=upper,
        upl=upl,
        lpl=lpl,
        spl=spl,
        relations=rel,
        rhs=rhs,
        source=name,
        notes={"relation_lines": rel_lines},
    )


def with_offsets(problem: Problem) -> Problem:
    """The problem with each relation's offset as its right-hand side (``--jj-offsets``):
    for files whose rounded values do not add up exactly."""
    return problem.copy(rhs=problem.relations @ problem.value)


def check_additive(problem: Problem) -> None:
    """Refuse a problem whose values do not satisfy its relations.

    The tolerance is the audit's: ``1e-9 (1 + |A| |value|)`` per relation, relative to the
    values in it. The error names the file, the first failing relation (with its line
    when read from JJ) and the option that takes the offsets as right-hand sides.

    Raises:
        NonAdditiveError: when a relation is off by more than the tolerance.
    """
    res = problem.residual()
    tol = 1e-9 * (1.0 + abs(problem.relations) @ np.abs(problem.value))
    bad = np.flatnonzero(np.abs(res) > tol)
    if not bad.size:
        return
    k = int(bad[0])
    a = problem.relations.tocsr()
    s, e = a.indptr[k], a.indptr[k + 1]
    terms = ", ".join(f"{problem.names[j]} ({c:g})" for j, c in zip(a.indices[s:e][:8], a.data[s:e][:8]))
    lines = problem.notes.get("relation_lines")
    raise NonAdditiveError(
        f"the values do not add up: relation {k + 1} of {problem.relations.shape[0]} (right-hand side "
        f"{problem.rhs[k]:.10g}, cells {terms}{', ...' if e - s > 8 else ''}) is off by {res[k]:.10g} with the given "
        f"values, and {bad.size} relation(s) in all. For files with rounded values use --jj-offsets (Python: "
        "jj_offsets=True, job files: jj_offsets = true) to take each relation's offset as its right-hand side",
        file=problem.source,
        line=int(lines[k]) if lines is not None and k < len(lines) else None,
    )


def write_jj(problem: Problem, path: str | Path, *, secondary: str = "s") -> None:
    """Write a :class:`Problem` as a JJ file (cells numbered in problem order).

    ``secondary`` is the letter written for complements (status M): ``s`` (default, as
    tau-ARGUS expects: the problem before suppression) or ``m`` to keep a protected
    pattern in the file (:func:`read_jj` reads ``m`` back as M).
    """
    codes = dict(_WRITE_STATUS)
    codes[SECONDARY] = secondary
    out = ["0", str(problem.n)]
    for i in range(problem.n):
        up = problem.upper[i]
        out.append(
            f"{i} {problem.value[i]:.10g} {problem.cost[i]:.10g} {codes[problem.status[i]]} "
            f"{problem.lower[i]:.10g} {(up if np.isfinite(up) else 1e30):.10g} "
            f"{problem.lpl[i]:.10g} {problem.upl[i]:.10g} {problem.spl[i]:.10g}"
        )
    a = problem.relations.tocsr()
    out.append(str(a.shape[0]))
    for r in range(a.shape[0]):
        s, e = a.indptr[r], a.indptr[r + 1]
        terms = " ".join(f"{j} ({c:.10g})" for j, c in zip(a.indices[s:e], a.data[s:e]))
        out.append(f"{problem.rhs[r]:.10g} {e - s} : {terms}")
    tmp = Path(str(path) + ".tmp")
    tmp.write_text("\n".join(out) + "\n")
    tmp.replace(path)


def with_structure(problem: Problem, model) -> Problem:
    """Give a problem read from JJ the codes and dimensions of the table it came from.

    JJ files number cells without codes; tau-ARGUS writes them in table order (the C-order
    product of the dimensions' codes, as :func:`tablesafe.compile_tables`). The relations
    of the file must be those of ``model`` (same rows, up to order), otherwise the file is
    not this table and an :class:`InputError` says so.
    """
    if problem.n != model.size:
        raise InputError(
            f"the JJ file has {problem.n} cells but the table over "
            f"{' x '.join(d.name for d in model.dims)} has {model.size}",
            file=problem.source,
        )

    def rows(a: sp.csr_matrix) -> set:
        a = a.tocsr()
        a.sort_indices()
        out = set()
        for r in range(a.shape[0]):
            s, e = a.indptr[r], a.indptr[r + 1]
            coef = a.data[s:e]
            sign = -1.0 if coef[np.argmin(coef)] < 0 and (coef < 0).sum() == 1 else 1.0
            out.add(tuple(zip(a.indices[s:e].tolist(), (sign * coef).round(9).tolist())))
        return out

    if rows(problem.relations) != rows(model.relations):
        raise InputError(
            "the relations of the JJ file differ from those of the table given by the dimensions "
            "(cells in another order or another hierarchy)",
            file=problem.source,
        )
    codes = model.codes.astype(str)
    cols = [codes[c] for c in codes.columns]
    names = cols[0].str.cat(cols[1:], sep="|") if len(cols) > 1 else cols[0]
    return problem.copy(codes=model.codes.copy(), names=names.to_numpy(dtype=object), model=model)
