"""The general model every protection method works on, and the pattern it returns.

A :class:`Problem` is the model of Fischetti and Salazar: cells with value, cost, status,
a priori bounds and protection levels, and linear relations ``A x = rhs`` (for tables,
``rhs = 0`` and each row is a total minus its parts). Hierarchical, multi-way, linked and
tabular-input tables all compile to it; JJ files read and write it directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tablesafe.errors import InputError
from tablesafe.percell import PerCell
from tablesafe.structure import CompiledModel

# Statuses of the analyst file (see docs/architecture.md).
SAFE = "S"          # publishable
PRIMARY = "U"       # sensitive by rule
MANUAL = "A"        # sensitive, set by hand
PROTECTED = "P"     # must be published, never a complement
SECONDARY = "M"     # withheld to protect others
EMPTY = "Z"         # no contributors: a known zero, never withheld
STATUSES = (SAFE, PRIMARY, MANUAL, PROTECTED, SECONDARY, EMPTY)
SENSITIVE = (PRIMARY, MANUAL)


@dataclass(frozen=True)
class Assessment:
    """How the rules judged the cells of a :class:`Problem` (set by
    :func:`tablesafe.rules.assess`).

    Attributes:
        rules: the rules and options as rule strings.
        fired: per rule string, how many cells it made sensitive.
        weight_mode: how the rules used sampling weights (None: no mode).
        count: what the frequency rule counted (``holdings`` or ``records``).
        symmetric: whether lower levels equal upper levels.
        negative: ``abs`` when the rules saw absolute contributions, else ``none``.
        levels_capped_at_bounds: sensitive cells whose level was capped at an a priori bound.
        holding: the holding variable the contributions were grouped by, if any.
        percent: ``(p, n)`` of the first p% rule among the rules (the contribution-level
            audit's default p and coalition), or None.
    """

    rules: tuple[str, ...]
    fired: Mapping[str, int]
    weight_mode: str | None
    count: str
    symmetric: bool
    negative: str
    levels_capped_at_bounds: int
    holding: str | None = None
    percent: tuple[float, int] | None = None


@dataclass(frozen=True)
class Contributions:
    """The largest contributions of every cell, as the rules saw them, kept for the
    contribution-level audit (seed 004; :mod:`tablesafe.uncertainty`).

    Attributes:
        top: (n, K) largest unit contributions (holdings summed when given), descending,
            without weights, 0-padded.
        count: (n,) number of real entries of ``top`` per cell.
        weight: (n, K) the sampling weight of each of them (1 without weights).
        unweighted: (n,) the cell's sum without weights.
        negative: (n,) True where the cell has a negative contribution.
    """

    top: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    unweighted: np.ndarray
    negative: np.ndarray

    @property
    def k(self) -> int:
        """Number of contributions kept per cell."""
        return int(self.top.shape[1])


@dataclass(frozen=True)
class Problem(PerCell):
    """Cells, relations, bounds and protection levels of a table to protect.

    A problem is a value: its attributes cannot be reassigned, and every stage that
    changes something returns a new problem (:meth:`copy` with the changes, or
    :func:`dataclasses.replace`). The arrays it holds are shared between such copies, so
    they are never changed in place either: build a changed array and pass it to
    :meth:`copy`.

    All arrays have one entry per cell. Bounds are absolute: the attacker knows a priori
    that cell ``i`` lies in ``[lower[i], upper[i]]`` (``upper`` may be ``inf``).
    Protection levels are distances from the value: a sensitive cell is protected when
    the attacker's interval reaches ``value + upl`` and ``value - lpl`` and is at least
    ``spl`` wide.

    Attributes:
        names: cell identifiers (codes joined with ``|``).
        value, cost, lower, upper, upl, lpl, spl: float arrays.
        status: one-letter statuses (``S U A P M Z``).
        relations: sparse (m, n) matrix; ``relations @ value == rhs``.
        rhs: right-hand sides (zeros for tables).
        codes: optional frame of codes per dimension (for writing tables back).
        contributors: optional number of units per cell (for singleton handling).
        rule: optional name of the rule that made a cell sensitive (analyst file only).
        model: optional table structure (dimensions and hierarchies) the cells come from;
            methods that split tables into subtables (modular) need it.
        capacity: optional protection capacity per cell (Loeve, *Notes on sensitivity measures
            and protection levels*, section 7.1): how far a
            cell may move when it protects others; suppression may use it as a tighter
            bound (``value - capacity``). Sensitive and single-unit cells get 0.
        response: the name of the response variable the values sum, if known.
        source: the file the problem was read from (JJ input), if any.
        assessment: how the rules judged the cells (None when not assessed here).
        notes: free-form further information (e.g. a JJ file's relation lines).
        declared_missing: per dimension, missing codes declared for the input rather
            than found in it (:attr:`CellTable.declared_missing`); the publication leaves
            out a code whose cells are all empty.
        contributions: the largest contributions per cell (:class:`Contributions`) when
            the problem was assessed from a cell table that has them.
        record_cells: linked tables tabulated from microdata: the bottom-level cells of
            the cross-classification of all dimensions that hold at least one record
            (one row each, a code column per dimension), so that the insider model can
            tell whether two cells of different tables share a respondent
            (:class:`tablesafe.structure.overlap.CellOverlap`); ``None`` otherwise.
    """

    names: np.ndarray
    value: np.ndarray
    cost: np.ndarray
    status: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    upl: np.ndarray
    lpl: np.ndarray
    spl: np.ndarray
    relations: sp.csr_matrix
    rhs: np.ndarray
    codes: pd.DataFrame | None = None
    contributors: np.ndarray | None = None
    rule: np.ndarray | None = None
    model: CompiledModel | None = None
    capacity: np.ndarray | None = None
    response: str | None = None
    source: str | None = None
    assessment: Assessment | None = None
    notes: dict[str, Any] = field(default_factory=dict)
    declared_missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    contributions: Contributions | None = None
    record_cells: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        n = len(self.value)
        for name in ("names", "cost", "status", "lower", "upper", "upl", "lpl", "spl"):
            arr = getattr(self, name)
            if len(arr) != n:
                raise InputError(f"Problem.{name} has {len(arr)} entries for {n} cells")
        for name in ("contributors", "capacity", "rule"):
            arr = getattr(self, name)
            if arr is not None and len(arr) != n:
                raise InputError(f"Problem.{name} has {len(arr)} entries for {n} cells")
        if self.contributions is not None and len(self.contributions.top) != n:
            raise InputError(f"Problem.contributions has {len(self.contributions.top)} rows for {n} cells")
        if self.relations.shape[1] != n:
            raise InputError(f"the relations have {self.relations.shape[1]} columns for {n} cells")
        if len(self.rhs) != self.relations.shape[0]:
            raise InputError(f"rhs has {len(self.rhs)} entries for {self.relations.shape[0]} relations")
        object.__setattr__(self, "relations", sp.csr_matrix(self.relations))

    @property
    def meta(self) -> dict[str, Any]:
        """The typed information (``response``, ``source``, the assessment's fields) and the
        notes as one new dict, for reading (kept for older callers; changing it changes
        nothing: set the fields or ``notes``)."""
        out: dict[str, Any] = {}
        if self.assessment is not None:
            out.update({f.name: getattr(self.assessment, f.name) for f in fields(self.assessment)})
            out["rules"] = list(self.assessment.rules)
        for name in ("response", "source"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        out.update(self.notes)
        return out

    @property
    def m(self) -> int:
        """Number of relations."""
        return self.relations.shape[0]

    @property
    def sensitive(self) -> np.ndarray:
        """Boolean mask of cells that need protection (statuses U and A)."""
        return np.isin(self.status, SENSITIVE)

    @property
    def empty(self) -> np.ndarray:
        """Boolean mask of empty cells (status Z)."""
        return self.status == EMPTY

    @property
    def structured(self) -> bool:
        """Whether ``model`` is a table structure over every cell (not a problem of
        relations only): what HiTaS subtables need."""
        return self.model is not None and self.model.size == self.n

    def copy(self, **changes) -> Problem:
        """A shallow copy with some fields replaced."""
        return replace(self, **changes)

    def residual(self, values: np.ndarray | None = None) -> np.ndarray:
        """``relations @ values - rhs`` (zero for an additive table)."""
        v = self.value if values is None else values
        return self.relations @ v - self.rhs

    @classmethod
    def from_arrays(
        cls,
        value,
        relations,
        *,
        status=None,
        names=None,
        cost=None,
        lower=None,
        upper=None,
        upl=None,
        lpl=None,
        spl=None,
        rhs=None,
        **kw,
    ) -> Problem:
        """Build with defaults: status S, cost = |value|, bounds [0, inf), levels 0."""
        value = np.asarray(value, dtype=float)
        n = len(value)
        z = np.zeros(n)
        rel = sp.csr_matrix(relations) if relations is not None else sp.csr_matrix((0, n))
        return cls(
            names=np.asarray(names if names is not None else [str(i) for i in range(n)], dtype=object),
            value=value,
            cost=np.asarray(cost, dtype=float) if cost is not None else np.abs(value),
            status=np.asarray(status if status is not None else [SAFE] * n, dtype="<U1"),
            lower=np.asarray(lower, dtype=float) if lower is not None else z.copy(),
            upper=np.asarray(upper, dtype=float) if upper is not None else np.full(n, np.inf),
            upl=np.asarray(upl, dtype=float) if upl is not None else z.copy(),
            lpl=np.asarray(lpl, dtype=float) if lpl is not None else z.copy(),
            spl=np.asarray(spl, dtype=float) if spl is not None else z.copy(),
            relations=rel,
            rhs=np.asarray(rhs, dtype=float) if rhs is not None else np.zeros(rel.shape[0]),
            **kw,
        )


@dataclass
class Pattern:
    """Which cells a protection method withholds, with what it knows about the result.

    Attributes:
        withheld: boolean mask over the problem's cells (primaries included).
        method: name of the method that made it.
        stats: figures about the run (seconds, iterations, gap, ...).
        certificates: optional frame with columns ``target``, ``direction``, ``cell``,
            ``value`` (see the audit) proving each sensitive cell's protection.
        proof: how the pattern was shown safe while it was made: ``"audit"`` (the
            independent LP audit passed; see ``audit``), ``"certificates"`` (every
            sensitive cell's certificates were checked) or ``""`` (not yet).
        audit: the :class:`~tablesafe.audit.AuditResult` the pattern passed when
            ``proof == "audit"`` (its ``stats["insider"]`` says whether single
            respondents were checked too), so that the pipeline does not audit it again.
    """

    withheld: np.ndarray
    method: str = ""
    stats: dict = field(default_factory=dict)
    certificates: pd.DataFrame | None = None
    proof: str = ""
    audit: Any = None

    def secondary(self, problem: Problem) -> np.ndarray:
        """Mask of withheld cells that are not sensitive (the complements)."""
        return self.withheld & ~problem.sensitive

    def statuses(self, problem: Problem) -> np.ndarray:
        """Problem statuses with complements marked ``M``."""
        out = problem.status.copy()
        out[self.secondary(problem)] = SECONDARY
        return out
