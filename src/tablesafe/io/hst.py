"""tau-ARGUS a priori files (``.hst``): per-cell statuses, costs, protection levels and
a priori bounds, named by their codes.

Each line holds the codes of one cell (one per dimension, an empty code meaning the
dimension's total), then a change type and its values, separated by ``,`` or ``;``:

- ``s`` safe, ``u`` unsafe (primary by hand), ``p`` protected, ``m`` / ``ml`` secondary
  (taken as primary by hand here: a secondary of an earlier run that must stay withheld);
- ``c`` or ``w`` followed by a cost;
- ``pl`` followed by the lower and upper protection level;
- ``ab`` followed by the lower and upper a priori bound.

Reading never decides anything: :func:`read_hst` returns the requests as a frame and
:func:`tablesafe.api.apply_apriori` applies them to a problem.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from tablesafe.errors import InputError

KINDS = {"s": "s", "u": "u", "p": "p", "m": "m", "ml": "m", "c": "c", "w": "c", "pl": "pl", "ab": "ab"}
_NVALUES = {"s": 0, "u": 0, "p": 0, "m": 0, "c": 1, "pl": 2, "ab": 2}


def read_hst(
    path: str | Path,
    dims: list[str],
    totals: list[str] | None = None,
    *,
    sep: str | None = None,
) -> pd.DataFrame:
    """Read an a priori file.

    Args:
        path: the ``.hst`` file.
        dims: dimension names, in the order the codes appear on each line.
        totals: total code per dimension (an empty code in the file means the total);
            default ``Total`` for every dimension.
        sep: field separator; detected from the first line (``;`` or ``,``) when None.

    Returns:
        A frame with one column per dimension (codes), ``kind`` (``s u p m c pl ab``),
        ``a`` and ``b`` (the numbers that follow, NaN when absent) and ``line``.

    Raises:
        InputError: naming the file and line of a malformed entry.
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"cannot read a priori file: {exc.strerror}", file=name) from None
    lines = text.splitlines()
    totals = list(totals) if totals is not None else ["Total"] * len(dims)
    if sep is None:
        first = next((ln for ln in lines if ln.strip()), "")
        sep = ";" if first.count(";") > first.count(",") else ","
    rows = []
    nd = len(dims)
    for lineno, fields in enumerate(csv.reader(lines, delimiter=sep, quotechar='"', skipinitialspace=True), start=1):
        if not fields or all(not f.strip() for f in fields):
            continue
        fields = [f.strip() for f in fields]
        if len(fields) < nd + 1:
            raise InputError(
                f"an a priori line needs {nd} code(s) and a change type, found {len(fields)} field(s)",
                file=name,
                line=lineno,
            )
        codes = [c if c != "" else totals[j] for j, c in enumerate(fields[:nd])]
        kind_raw = fields[nd].lower()
        if kind_raw not in KINDS:
            raise InputError(
                f"unknown a priori change type {fields[nd]!r} (expected s, u, p, m, ml, c, w, pl or ab)",
                file=name,
                line=lineno,
            )
        kind = KINDS[kind_raw]
        need = _NVALUES[kind]
        vals = fields[nd + 1:]
        if len(vals) < need:
            raise InputError(f"change type {kind_raw!r} needs {need} number(s)", file=name, line=lineno)
        try:
            nums = [float(v.replace(",", ".")) if sep != "," else float(v) for v in vals[:need]]
        except ValueError:
            raise InputError(f"non-numeric value after {kind_raw!r}", file=name, line=lineno) from None
        nums += [np.nan] * (2 - len(nums))
        rows.append((*codes, kind, nums[0], nums[1], lineno))
    return pd.DataFrame(rows, columns=[*dims, "kind", "a", "b", "line"])


def hst_text(frame: pd.DataFrame, dims: list[str], *, sep: str = ";") -> str:
    """A frame with dimension columns, ``kind``, ``a``, ``b`` as a priori file text."""
    out = []
    cols = [*dims, "kind", "a", "b"]
    for row in frame[cols].itertuples(index=False, name=None):
        codes, kind, a, b = row[: len(dims)], row[len(dims)], row[-2], row[-1]
        parts = [f'"{c}"' for c in codes] + [str(kind)]
        n = _NVALUES[KINDS[str(kind)]]
        parts += [f"{v:.10g}" for v in (a, b)[:n]]
        out.append(sep.join(parts))
    return "\n".join(out) + "\n"


def write_hst(frame: pd.DataFrame, dims: list[str], path: str | Path, *, sep: str = ";") -> None:
    """Write a frame with dimension columns, ``kind``, ``a``, ``b`` as an a priori file
    (atomically)."""
    from tablesafe.io.publication import staged_files

    with staged_files({"hst": path}) as tmp:
        tmp["hst"].write_text(hst_text(frame, dims, sep=sep), encoding="utf-8")
