"""``tablesafe inspect``: summarise a data file and the hierarchies of its dimensions."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import HierarchyError, InputError
from tablesafe.structure import Hierarchy


@dataclass
class DimSummary:
    """What one dimension looks like in the data and in its hierarchy."""

    name: str
    data_codes: int
    hierarchy: str
    codes: int = 0
    leaves: int = 0
    depth: int = 0
    unknown: list[str] = field(default_factory=list)
    unused_leaves: int = 0


@dataclass
class DataSummary:
    """Records, columns and per-dimension facts of a data file."""

    source: str
    records: int
    columns: pd.DataFrame
    dims: list[DimSummary]


def load_frame(data: Any, metadata: str | Path | None = None) -> pd.DataFrame:
    """Read a data file (CSV, Parquet, or tau-ARGUS .asc with .rda) into pandas."""
    if not isinstance(data, (str, Path)):
        if hasattr(data, "to_pandas"):
            return data.to_pandas()
        return pd.DataFrame(data)
    path = Path(data)
    if not path.exists():
        raise InputError("data file not found", file=str(path))
    suffix = path.suffix.lower()
    if suffix == ".asc" or metadata is not None:
        if metadata is None:
            raise InputError("a tau-ARGUS .asc file needs its metadata (--metadata FILE.rda)", file=str(path))
        try:
            from tablesafe.io.tauargus import read_asc
        except ImportError:
            raise InputError("reading tau-ARGUS .asc files is not available in this installation") from None
        import duckdb

        con = duckdb.connect()
        try:
            src = read_asc(path, metadata).open(con)
            frame = con.execute(f"SELECT * FROM {src.from_sql}").df()
        except duckdb.Error as exc:
            raise InputError(f"cannot read the microdata: {exc}", file=str(path)) from None
        finally:
            con.close()
        return frame.apply(lambda c: c.str.strip() if c.dtype == object else c)
    try:
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path)
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    except (ValueError, OSError) as exc:
        raise InputError(f"cannot read the data: {exc}", file=str(path)) from None


def load_hierarchy(spec: str, codes: list[str], total: str = "Total") -> Hierarchy:
    """A hierarchy from a ``.hrc`` file, a parent-child CSV, or ``lengths:``/``digits:``."""
    if spec.startswith(("lengths:", "digits:")):
        kind, _, nums = spec.partition(":")
        try:
            lengths = [int(x) for x in nums.replace(" ", ",").split(",") if x]
        except ValueError:
            raise HierarchyError(f"bad code lengths {nums!r}; write e.g. lengths:1,2,3") from None
        return Hierarchy.from_lengths(codes, lengths, total=total, cumulative=kind == "lengths")
    path = Path(spec)
    if not path.exists():
        raise HierarchyError("hierarchy file not found", file=str(path))
    if path.suffix.lower() == ".csv":
        return Hierarchy.from_parent_child(path, total=total)
    return Hierarchy.from_hrc(path, total=total)


def summarise(data: Any, dims: list[str], *, metadata: str | Path | None = None, total: str = "Total") -> DataSummary:
    """Summarise records, columns (type, missing, distinct) and each named dimension."""
    frame = load_frame(data, metadata)
    if len(frame.columns) == 0:
        raise InputError("the data has no columns", file=str(data))
    cols = []
    for c in frame.columns:
        s = frame[c]
        num = pd.to_numeric(s, errors="coerce")
        numeric = bool(num.notna().sum() == s.notna().sum() and s.notna().any())
        cols.append(
            {
                "column": str(c),
                "type": "number" if numeric else "text",
                "missing": int(s.isna().sum()),
                "distinct": int(s.nunique(dropna=True)),
                "min": float(num.min()) if numeric else np.nan,
                "max": float(num.max()) if numeric else np.nan,
                "negative": int((num < 0).sum()) if numeric else 0,
            }
        )
    summaries = []
    for d in dims:
        name, _, hier = d.partition("=")
        name = name.strip()
        if name not in frame.columns:
            raise InputError(
                f"no column {name!r} in the data; columns are {', '.join(map(str, frame.columns))}",
                file=str(data) if isinstance(data, (str, Path)) else None,
                column=name,
            )
        codes = sorted(frame[name].dropna().astype(str).str.strip().unique().tolist())
        ds = DimSummary(name, len(codes), hier.strip() or "flat (codes from the data)")
        h = None
        if not hier.strip() and metadata is not None:
            from tablesafe.io.tauargus import read_rda

            declared = read_rda(metadata).hierarchy(name, codes, total)
            if isinstance(declared, str):
                ds.hierarchy = f"{declared} (from the metadata)"
                h = load_hierarchy(declared, codes, total)
            elif declared is not None:
                ds.hierarchy = "from the metadata"
                h = declared
        elif hier.strip():
            h = load_hierarchy(hier.strip(), codes, total)
        if h is not None:
            known = set(h.codes)
            leaves = set(h.leaves)
            ds.codes = len(h)
            ds.leaves = len(leaves)
            ds.depth = int(h.depths.max())
            ds.unknown = [c for c in codes if c not in known]
            ds.unused_leaves = len(leaves - set(codes))
        else:
            ds.codes = len(codes) + 1
            ds.leaves = len(codes)
            ds.depth = 1
        summaries.append(ds)
    return DataSummary(str(data), len(frame), pd.DataFrame(cols), summaries)
