"""Castro's tabular protection instances from their CUTEst SIF files, as JJ files.

The CUTEst collection holds J. Castro's instances (EJOR 171, 2006) as the quadratic
programs of minimum-distance controlled perturbation: one variable per cell (its
deviation), one equation per relation, and bounds that carry the data. The instances in
``../shared/benchmarks/castro/`` came from the same files; this script rebuilds those
(and reproduces them, see ``--check``) and the others the benchmarks had not seen
(HIE1327D, HIER133A-E, HIER163A-E, NINE12, NINE5D, TABLE1, TABLE3-6).

How a SIF file gives a cell (``i`` is column ``C<i+1>``): the objective's weight of a
cell is ``2 / value`` (1 for a zero cell), its bounds are those of its deviation;
the cells of an instance may go down to ``(1 - r)`` times their value, ``r`` the most
common ratio of ``-LO`` to the value (1 or 0.5 in this collection).

- ``LO <= 0 < UP``: a safe cell; its value is ``-LO / r`` where that agrees with the
  weight to 1e-5 (exact where the weight is rounded), else the weight's;
- ``LO == UP == 0``: a fixed cell (status ``z``), empty or of a known value;
- ``LO > 0``: a sensitive cell whose deviation must reach ``LO`` upwards; upper and
  lower protection levels are both ``LO`` (the source stores one); its value is the
  safe cells' most common upper bound less ``UP`` where that agrees with the weight to
  1e-5, else the weight's;
- cost = value (1 for a zero cell). Relations keep their coefficients.

Usage (the SIF files from a copy of the CUTEst SIF collection, for example the mirror
that ``fetch github:optimizers/mastsif-mirror`` gives)::

    python benchmarks/castro_sif.py --sif-dir DIR --out DIR [NAME ...]
    python benchmarks/castro_sif.py --sif-dir DIR --check   # against the curated JJ files
"""

from __future__ import annotations

import argparse
import subprocess
from collections import Counter
from pathlib import Path

CASTRO = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "castro"
UNSEEN = ["HIE1327D", "HIER133A", "HIER133B", "HIER133C", "HIER133D", "HIER133E", "HIER163A", "HIER163B",
          "HIER163C", "HIER163D", "HIER163E", "NINE12", "NINE5D", "TABLE1", "TABLE3", "TABLE4", "TABLE5",
          "TABLE6"]
"""The instances of the collection that ``../shared/benchmarks/castro/`` does not hold."""


def _num(s: str) -> float:
    return float(s.replace("D", "E").replace("d", "e"))


def sif_to_jj(text: str) -> str:
    """The JJ text of one SIF file's instance (see the module text)."""
    section = ""
    lo: dict[str, float] = {}
    up: dict[str, float] = {}
    q: dict[str, float] = {}
    cols: set[str] = set()
    rows: dict[str, list[tuple[str, float]]] = {}
    row_order: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("*"):
            continue
        if not line[0].isspace():
            section = line.split()[0]
            continue
        f = line.split()
        if section == "ROWS":
            if f[0] == "E":
                rows[f[1]] = []
                row_order.append(f[1])
        elif section == "COLUMNS":
            cols.add(f[0])
            for k in range(1, len(f) - 1, 2):
                if f[k] in rows:
                    rows[f[k]].append((f[0], _num(f[k + 1])))
        elif section == "BOUNDS":
            kind, c, v = f[0], f[2], _num(f[3])
            cols.add(c)
            if kind == "LO":
                lo[c] = v
            elif kind == "UP":
                up[c] = v
            elif kind == "FX":
                lo[c] = up[c] = v
            else:
                raise ValueError(f"bound type {kind} not handled")
        elif section == "QMATRIX" and f[0] == f[1]:
            q[f[0]] = _num(f[2])
    order = sorted(cols, key=lambda c: int(c[1:]))
    index = {c: i for i, c in enumerate(order)}
    # how far below its value a safe cell may go, relative to it (1: down to zero)
    spans = Counter(round(-lo[c] / (2.0 / q[c]), 2) for c in order
                    if lo.get(c, 0.0) < 0 < up.get(c, 0.0) and q.get(c, 0.0) > 0)
    below = spans.most_common(1)[0][0] if spans else 1.0
    # the most common upper bound of the safe cells (sensitive cells store theirs less their value)
    tops = Counter(up[c] - lo.get(c, 0.0) / below for c in order if lo.get(c, 0.0) < 0 < up.get(c, 0.0))
    top = tops.most_common(1)[0][0] if tops else None
    out = ["0", str(len(order))]
    for i, c in enumerate(order):
        low, high = lo.get(c, 0.0), up.get(c, 0.0)
        weight = 2.0 / q[c] if q.get(c, 0.0) > 0 else 1.0
        level = 0.0
        if low == 0 and high == 0:  # fixed: an empty cell (weight 2), or a known value
            value = 0.0 if weight == 1.0 else weight
            status, cell_lb, cell_ub = "z", value, value
        elif low > 0:  # sensitive: its deviation must reach ``low`` upwards
            value, status, level = weight, "u", low
            if top is not None and abs(top - high - weight) <= 1e-5 * max(weight, 1.0):
                value = top - high
            cell_lb, cell_ub = value * (1.0 - below), value + high
        else:
            if low == 0 and weight == 1.0:  # a zero cell that may grow
                value = 0.0
            else:
                value = -low / below if abs(-low / below - weight) <= 1e-5 * max(weight, 1.0) else weight
            status, cell_lb, cell_ub = "s", value + low, value + high
        cost = value if value != 0 else 1.0
        out.append(f"{i} {_fmt(value)} {_fmt(cost)} {status} {_fmt(cell_lb)} {_fmt(cell_ub)} "
                   f"{_fmt(level)} {_fmt(level)} 0")
    out.append(str(len(row_order)))
    for r in row_order:
        terms = sorted(rows[r], key=lambda t: (t[1] >= 0, index[t[0]]))
        body = " ".join(f"{index[c]} ({_fmt(v)})" for c, v in terms)
        out.append(f"0 {len(terms)} : {body}")
    return "\n".join(out) + "\n"


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _read(sif_dir: Path, name: str) -> str:
    path = sif_dir / f"{name}.SIF"
    if path.exists():
        return path.read_text()
    # a bare git directory (what ``fetch`` gives): read the file from its HEAD
    return subprocess.run(["git", "--git-dir", str(sif_dir), "show", f"HEAD:{name}.SIF"], check=True,
                          capture_output=True, text=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sif-dir", required=True, type=Path, help="folder (or bare git directory) of the SIF files")
    ap.add_argument("--out", type=Path, help="folder for the JJ files")
    ap.add_argument("--check", action="store_true", help="compare with the curated JJ files instead")
    ap.add_argument("names", nargs="*", help=f"instances (default: {', '.join(UNSEEN)})")
    a = ap.parse_args()
    if a.check:
        import tempfile

        import numpy as np

        from tablesafe.io.jj import read_jj

        scratch = Path(tempfile.mkdtemp())
        for jj in sorted(CASTRO.glob("*.jj")):
            rebuilt = scratch / jj.name
            rebuilt.write_text(sif_to_jj(_read(a.sif_dir, jj.stem)))
            ours, theirs = read_jj(rebuilt), read_jj(jj)
            rebuilt.unlink()
            same = (ours.n == theirs.n and np.array_equal(ours.status, theirs.status)
                    and np.allclose(ours.value, theirs.value) and np.allclose(ours.upl, theirs.upl)
                    and np.allclose(ours.upper, theirs.upper) and np.allclose(ours.cost, theirs.cost)
                    and (ours.relations != theirs.relations).nnz == 0)
            print(f"{jj.stem}: {'same' if same else 'DIFFERENT'}")
        scratch.rmdir()
        return
    if a.out is None:
        ap.error("--out is needed unless --check")
    a.out.mkdir(parents=True, exist_ok=True)
    for name in a.names or UNSEEN:
        (a.out / f"{name}.jj").write_text(sif_to_jj(_read(a.sif_dir, name)))
        print(f"wrote {a.out / f'{name}.jj'}")


if __name__ == "__main__":
    main()
