"""tau-ARGUS file formats: ``.rda`` metadata, ``.asc`` microdata and ``.tab`` tabular input.

* ``.rda`` describes the variables. Fixed-width microdata: ``name start length [missing1
  [missing2]]``; free-format data (a ``<SEPARATOR>`` is declared): ``name [length]
  [missing ...]``. Indented ``<KEYWORD> args`` lines below a variable give its roles
  (``<RECODEABLE>``, ``<NUMERIC>``, ``<WEIGHT>``, ``<HOLDING>``, ``<REQUEST>``,
  ``<HIERARCHICAL>``, ``<HIERLEVELS>``, ``<HIERCODELIST>``, ``<TOTCODE>``, ...).
* ``.asc`` microdata is read by DuckDB, so large files are scanned, not loaded.
* ``.tab`` tabular files hold one cell per line: the codes, then the numeric columns in the
  order of the ``.rda``; decimal commas are accepted.

``.hrc`` hierarchy files are read by :meth:`tablesafe.structure.Hierarchy.from_hrc`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.io.frames import Source, SourceOpener, parse_numbers, sql_ident, sql_string
from tablesafe.structure import DEFAULT_TOTAL, Hierarchy

_PROP = re.compile(r"<\s*([A-Za-z_]+)\s*>([^<]*)")
_GLOBAL_KEYS = {"SEPARATOR", "SAFE", "UNSAFE", "PROTECT", "EMPTY"}


def _tokens(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return text.split()


@dataclass
class RdaVariable:
    """One variable of a tau-ARGUS metadata file.

    Attributes:
        name: variable name.
        start: 1-based first column (fixed-width data only).
        length: field width.
        missing: declared missing codes, blanks stripped.
        props: upper-case keyword -> list of arguments, e.g. ``{"HIERLEVELS": ["3","1","1"]}``.
        line: line of the declaration in the ``.rda`` file.
    """

    name: str
    start: int | None = None
    length: int | None = None
    missing: tuple[str, ...] = ()
    props: dict[str, list[str]] = field(default_factory=dict)
    line: int = 0

    def has(self, key: str) -> bool:
        """True when the keyword ``<key>`` was given for this variable."""
        return key.upper() in self.props

    def arg(self, key: str) -> str | None:
        """First argument of ``<key>``, or None."""
        v = self.props.get(key.upper())
        return v[0] if v else None

    @property
    def is_numeric(self) -> bool:
        return any(self.has(k) for k in ("NUMERIC", "WEIGHT", "MAXSCORE", "FREQUENCY", "LOWERPL",
                                         "UPPERPL", "COSTVAR", "SHADOW"))

    @property
    def is_explanatory(self) -> bool:
        return self.has("RECODEABLE") or self.has("HIERARCHICAL") or self.has("TOTCODE")


@dataclass
class Metadata:
    """The contents of a tau-ARGUS ``.rda`` file."""

    variables: list[RdaVariable]
    separator: str | None = None
    status_codes: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    def __contains__(self, name: object) -> bool:
        return any(v.name == name for v in self.variables)

    def __getitem__(self, name: str) -> RdaVariable:
        for v in self.variables:
            if v.name == name:
                return v
        raise InputError(
            f"variable {name!r} is not declared; the metadata declares "
            f"{', '.join(repr(v.name) for v in self.variables)}",
            file=str(self.path) if self.path else None,
            column=name,
        )

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.variables]

    def with_role(self, key: str) -> list[str]:
        """Names of the variables carrying ``<key>``."""
        return [v.name for v in self.variables if v.has(key)]

    def resolve(self, ref: str) -> Path:
        """A file named in the metadata, relative to the ``.rda`` folder (case-insensitive,
        falling back to the bare file name for foreign absolute paths)."""
        base = self.path.parent if self.path else Path(".")
        cand = Path(ref)
        if cand.is_absolute() and cand.exists():
            return cand
        p = base / ref
        if p.exists():
            return p
        bare = re.split(r"[\\/]", ref)[-1]
        for f in base.iterdir() if base.is_dir() else []:
            if f.name.lower() == bare.lower():
                return f
        raise InputError(f"file {ref!r} named in the metadata not found", file=str(self.path))

    def hierarchy(self, name: str, data_codes: list[str] | None = None,
                  total: str | None = None) -> Hierarchy | str | None:
        """The hierarchy declared for variable ``name``: a :class:`Hierarchy` from
        ``<HIERCODELIST>``, the string ``"digits:..."`` from ``<HIERLEVELS>``, or None (flat)."""
        v = self[name]
        tot = total or v.arg("TOTCODE") or DEFAULT_TOTAL
        if v.has("HIERCODELIST"):
            lead = v.arg("HIERLEADSTRING") or "@"
            return Hierarchy.from_hrc(self.resolve(v.arg("HIERCODELIST") or ""), leadstring=lead, total=tot)
        if v.has("HIERLEVELS"):
            return "digits:" + ",".join(v.props["HIERLEVELS"])
        return None


def read_rda(path: str | Path) -> Metadata:
    """Read a tau-ARGUS ``.rda`` metadata file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="latin-1")
    except OSError as exc:
        raise InputError(f"cannot read metadata file: {exc.strerror}", file=str(path)) from None
    variables: list[RdaVariable] = []
    glob: dict[str, list[str]] = {}
    cur: RdaVariable | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        if line.startswith("<"):
            for key, args in _PROP.findall(line):
                key = key.upper()
                vals = _tokens(args.strip())
                if cur is None or key in _GLOBAL_KEYS:
                    glob[key] = vals
                else:
                    cur.props[key] = vals
            continue
        toks = re.findall(r'"[^"]*"|\S+', line)
        cur = RdaVariable(name=toks[0].strip('"'), line=lineno)
        cur.props["_REST"] = toks[1:]
        variables.append(cur)
    sep = glob.get("SEPARATOR", [None])[0]
    for v in variables:
        rest = v.props.pop("_REST")
        unq = [t.strip('"').strip() for t in rest]
        try:
            if sep is None:
                if len(rest) < 2 or rest[0].startswith('"'):
                    raise ValueError
                v.start, v.length = int(rest[0]), int(rest[1])
                v.missing = tuple(m for m in unq[2:] if m)
            elif rest and not rest[0].startswith('"'):
                v.length = int(rest[0])
                v.missing = tuple(m for m in unq[1:] if m)
            else:
                v.missing = tuple(m for m in unq if m)
        except ValueError:
            raise InputError(
                "a variable line needs 'name start length [missing ...]' (fixed format) "
                "or 'name [length] [missing ...]' (with <SEPARATOR>)",
                file=str(path), line=v.line, column=v.name,
            ) from None
    if not variables:
        raise InputError("the metadata declares no variables", file=str(path))
    status = {k: glob[k][0] for k in ("SAFE", "UNSAFE", "PROTECT", "EMPTY") if glob.get(k)}
    return Metadata(variables, sep, status, path)


@dataclass
class AscSource(SourceOpener):
    """tau-ARGUS microdata (``.asc``) with its metadata; pass it to ``tabulate``.

    Variables are exposed as text columns named as in the metadata (fixed-width fields
    are cut by position; free-format lines are split at the declared separator).
    """

    path: Path
    metadata: Metadata

    def open(self, con: duckdb.DuckDBPyConnection) -> Source:
        """Register with a DuckDB connection (used by ``tabulate``)."""
        md = self.metadata
        fname = str(self.path)
        if not self.path.exists():
            raise InputError("microdata file not found", file=fname)
        if self.path.stat().st_size == 0:
            raise InputError("empty input: the microdata file has no records", file=fname)
        cols = [v.name for v in md.variables]
        reader = (f"read_csv({sql_string(fname)}, columns={{'line': 'VARCHAR'}}, header=false, "
                  "delim='\\x01', quote='', escape='', auto_detect=false, strict_mode=false)")
        # odd line ends (\r\r\n) leave CR/LF at the start or end of lines: drop them
        reader = f"(SELECT trim(line, chr(10) || chr(13)) AS line FROM {reader})"
        if md.separator is None:
            for v in md.variables:
                if v.start is None or v.length is None:
                    raise InputError("fixed-width metadata needs a start and length",
                                     file=str(md.path), column=v.name)
            sel = ", ".join(
                f"substr(line, {v.start}, {v.length}) AS {sql_ident(v.name)}" for v in md.variables
            )
            from_sql = f"(SELECT {sel} FROM {reader})"

            def cut(line: str) -> dict[str, str]:
                return {v.name: line[v.start - 1: v.start - 1 + v.length] for v in md.variables}
        else:
            # free format: split each line at the separator (quotes around fields removed)
            sel = ", ".join(
                f"trim(trim(parts[{i + 1}]), '\"') AS {sql_ident(c)}" for i, c in enumerate(cols)
            )
            from_sql = (f"(SELECT {sel} FROM (SELECT string_split(line, "
                        f"{sql_string(md.separator)}) AS parts FROM {reader} "
                        f"WHERE trim(line) <> ''))")

            def cut(line: str) -> dict[str, str]:
                return dict(zip(cols, (p.strip().strip('"') for p in line.rstrip("\r").split(md.separator))))

        def locate(column: str, pred: Callable[[str | None], bool]) -> tuple[int, str | None] | None:
            with open(self.path, encoding="latin-1") as fh:
                for lineno, line in enumerate(fh, start=1):
                    v = cut(line.rstrip("\r\n")).get(column)
                    if v is not None and not v.strip():
                        v = None
                    if pred(v):
                        return lineno, v
            return None

        types = {c: "VARCHAR" for c in cols}
        return Source(from_sql, cols, types, fname, "asc", locate, metadata=md)


def read_asc(asc: str | Path, rda: str | Path | Metadata) -> AscSource:
    """tau-ARGUS microdata ``asc`` described by ``rda``, ready for ``tabulate``."""
    md = rda if isinstance(rda, Metadata) else read_rda(rda)
    return AscSource(Path(asc), md)


@dataclass
class TabularInput:
    """A tau-ARGUS ``.tab`` file read with its metadata: one row per given cell."""

    frame: pd.DataFrame
    metadata: Metadata
    path: Path

    @property
    def dims(self) -> list[str]:
        return [v.name for v in self.metadata.variables if v.is_explanatory]


def read_tab(tab: str | Path, rda: str | Path | Metadata) -> TabularInput:
    """Read a tau-ARGUS ``.tab`` file: explanatory codes (stripped), then numeric columns.

    Empty numeric fields and ``-`` become NaN. The status column (``<STATUS>``) stays text.
    """
    md = rda if isinstance(rda, Metadata) else read_rda(rda)
    path = Path(tab)
    sep = md.separator or ";"
    names = md.names
    try:
        raw = pd.read_csv(path, sep=sep, header=None, dtype=str, keep_default_na=False,
                          skipinitialspace=False, quotechar='"', engine="python")
    except (OSError, pd.errors.EmptyDataError) as exc:
        raise InputError(f"cannot read tabular file: {exc}", file=str(path)) from None
    if raw.empty:
        raise InputError("empty input: the tabular file has no cells", file=str(path))
    if raw.shape[1] != len(names):
        raise InputError(
            f"the tabular file has {raw.shape[1]} fields per line but the metadata declares "
            f"{len(names)} variables ({', '.join(names)})", file=str(path), line=1)
    raw.columns = names
    out = {}
    for v in md.variables:
        col = raw[v.name].astype(str).str.strip()
        if v.is_explanatory or v.has("STATUS") or not v.is_numeric:
            out[v.name] = col.to_numpy(dtype=object)
        else:
            out[v.name] = parse_numbers(col, v.name, str(path))
    return TabularInput(pd.DataFrame(out), md, path)
