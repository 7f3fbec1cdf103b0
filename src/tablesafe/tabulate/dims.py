"""Dimension specifications: a column name with the hierarchy its codes follow."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablesafe.errors import HierarchyError, InputError
from tablesafe.structure import DEFAULT_TOTAL, Hierarchy

MAX_DIMS = 6


@dataclass(frozen=True)
class DimSpec:
    """An explanatory variable of a table and how its codes form a hierarchy.

    Attributes:
        name: column name in the data.
        hierarchy: a :class:`Hierarchy`; a path to a tau-ARGUS ``.hrc`` file or a
            parent-child ``.csv`` (columns ``code,parent``); ``"lengths:1,2,3"``
            (cumulative code-prefix lengths per level); ``"digits:3,1,1"`` (tau-ARGUS
            hierarchy digits, increments); or None: flat, codes taken from the data (or
            from ``codelist``) in natural order.
        total: total code (ignored when ``hierarchy`` is a ready :class:`Hierarchy`).
        codelist: codes of a flat dimension, listed even when the data lack them.
    """

    name: str
    hierarchy: Hierarchy | str | Path | None = None
    total: str = DEFAULT_TOTAL
    codelist: Sequence[str] | None = None

    def needs_data_codes(self) -> bool:
        """True when the codes come from the data (flat or code-length hierarchies)."""
        h = self.hierarchy
        return h is None or (isinstance(h, str) and h.split(":", 1)[0].strip().lower() in ("lengths", "digits"))

    def fixed_hierarchy(self) -> Hierarchy | None:
        """The hierarchy when it does not depend on the data, else None."""
        h = self.hierarchy
        if isinstance(h, Hierarchy):
            return h
        if h is None or self.needs_data_codes():
            return None
        path = Path(h)
        if not path.exists():
            raise HierarchyError(
                f"hierarchy file for dimension {self.name!r} not found "
                "(expected a .hrc or parent-child .csv path, 'lengths:...', 'digits:...' or None)",
                file=str(path),
            )
        if path.suffix.lower() == ".csv":
            return Hierarchy.from_parent_child(path, total=self.total)
        return Hierarchy.from_hrc(path, total=self.total)

    def build(self, data_codes: Sequence[str], extra_top: Sequence[str] = ()) -> Hierarchy:
        """The hierarchy of this dimension given the (stripped) codes found in the data.

        ``extra_top`` codes (declared missing codes) are added below the total when the
        hierarchy does not already know them.
        """
        fixed = self.fixed_hierarchy()
        extra_top = [c for c in extra_top if c]
        if fixed is not None:
            return fixed.with_codes(extra_top)
        h = self.hierarchy
        codes = [c for c in data_codes if c not in extra_top]
        if h is None:
            base = list(self.codelist) if self.codelist is not None else []
            return Hierarchy.flat([*base, *codes], total=self.total).with_codes(extra_top)
        kind, _, spec = str(h).partition(":")
        try:
            lengths = [int(x) for x in spec.replace(",", " ").split()]
        except ValueError:
            raise HierarchyError(f"bad code lengths {spec!r} for dimension {self.name!r}", column=self.name) from None
        try:
            built = Hierarchy.from_lengths(codes, lengths, total=self.total,
                                           cumulative=kind.strip().lower() == "lengths")
        except HierarchyError as exc:
            raise HierarchyError(f"{exc} in dimension {self.name!r}", column=self.name, code=exc.code) from None
        return built.with_codes(extra_top)


def as_dimspecs(dims: Any) -> list[DimSpec]:
    """Normalise dimension arguments in any form :func:`dim_specs` accepts (names,
    ``"name=hierarchy"`` strings, pairs, :class:`DimSpec`, a mapping ``{name: hierarchy}``)
    and check them (1 to 6, distinct)."""
    out = dim_specs(dims)
    if not 1 <= len(out) <= MAX_DIMS:
        raise InputError(f"a table needs between 1 and {MAX_DIMS} dimensions, got {len(out)}")
    names = [d.name for d in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InputError(f"dimension listed twice: {sorted(dup)}")
    return out


def dim_specs(dims: Any, total: str = DEFAULT_TOTAL) -> list[DimSpec]:
    """Normalise dimension arguments of :func:`tablesafe.protect` to :class:`DimSpec` objects.

    Accepts a list of names, ``"name=hierarchy"`` strings (hierarchy: a ``.hrc`` file, a
    parent-child CSV, ``lengths:1,2`` or ``digits:3,1,1``), ``(name, hierarchy)`` pairs,
    ``DimSpec`` objects, or a mapping ``{name: hierarchy}``.
    """
    if dims is None:
        raise InputError("no dimensions given: name at least one explanatory variable (--dim)")
    if isinstance(dims, (str, DimSpec)):
        dims = [dims]
    if isinstance(dims, Mapping):
        dims = list(dims.items())
    out = []
    for d in dims:
        if isinstance(d, DimSpec):
            out.append(d)
        elif isinstance(d, str):
            name, _, hier = d.partition("=")
            name = name.strip()
            if not name:
                raise InputError(f"empty dimension name in {d!r}")
            out.append(DimSpec(name, hier.strip() or None, total=total))
        elif isinstance(d, Sequence) and len(d) == 2:
            name, hier = d
            out.append(DimSpec(str(name), hier, total=total))
        else:
            raise InputError(f"cannot understand the dimension {d!r}")
    return out
