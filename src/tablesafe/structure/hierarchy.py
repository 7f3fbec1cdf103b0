"""Code hierarchies of one dimension: flat lists, tau-ARGUS ``.hrc`` files, parent-child
tables and code-length ("hierarchy digits") hierarchies.

A :class:`Hierarchy` is a rooted tree whose root is the total code. Codes are kept in
pre-order (total first, then each node followed by its subtree), which is also the order
tau-ARGUS writes tables in.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tablesafe.errors import HierarchyError

DEFAULT_TOTAL = "Total"


def natural_key(code: str) -> tuple[int, int | str]:
    """Sort key that orders numeric codes by value and puts them before other codes."""
    stripped = code.strip()
    if re.fullmatch(r"[+-]?\d+", stripped):
        return (0, int(stripped))
    return (1, stripped)


@dataclass(frozen=True)
class Hierarchy:
    """A tree of codes with the total code at its root.

    Attributes:
        codes: all codes in pre-order; ``codes[0]`` is the total.
        parent: for each code the index of its parent in ``codes`` (-1 for the total).
    """

    codes: tuple[str, ...]
    parent: tuple[int, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)
    _children: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.codes) != len(self.parent):
            raise HierarchyError("codes and parent lists differ in length")
        index: dict[str, int] = {}
        for i, c in enumerate(self.codes):
            if c in index:
                raise HierarchyError("duplicate code in hierarchy", code=c)
            index[c] = i
        children: list[list[int]] = [[] for _ in self.codes]
        for i, p in enumerate(self.parent):
            if i == 0:
                if p != -1:
                    raise HierarchyError("the first code must be the total (no parent)")
                continue
            if not 0 <= p < i:
                raise HierarchyError("codes must be in pre-order with parents first", code=self.codes[i])
            children[p].append(i)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_children", tuple(tuple(c) for c in children))

    # ------------------------------------------------------------------ queries
    @property
    def total(self) -> str:
        """The total (root) code."""
        return self.codes[0]

    def __len__(self) -> int:
        return len(self.codes)

    def __contains__(self, code: object) -> bool:
        return code in self._index

    def index(self, code: str) -> int:
        """Position of ``code`` in :attr:`codes`; raises ``KeyError`` when unknown."""
        return self._index[code]

    def children(self, i: int) -> tuple[int, ...]:
        """Indices of the children of node ``i``."""
        return self._children[i]

    def is_leaf(self, i: int) -> bool:
        """True when node ``i`` has no children."""
        return not self._children[i]

    @property
    def leaves(self) -> list[str]:
        """Codes without children (the codes microdata records carry)."""
        return [c for i, c in enumerate(self.codes) if not self._children[i]]

    @property
    def parents(self) -> list[int]:
        """Indices of nodes with children (each gives one relation per cross-section)."""
        return [i for i in range(len(self.codes)) if self._children[i]]

    def depth(self, i: int) -> int:
        """Depth of node ``i`` (0 for the total)."""
        d = 0
        while self.parent[i] != -1:
            i = self.parent[i]
            d += 1
        return d

    @property
    def depths(self) -> np.ndarray:
        """Depth of every node, as an array aligned with :attr:`codes`."""
        out = np.zeros(len(self.codes), dtype=np.int64)
        for i in range(1, len(self.codes)):
            out[i] = out[self.parent[i]] + 1
        return out

    @property
    def is_flat(self) -> bool:
        """True when every non-total code is a direct child of the total."""
        return all(p in (-1, 0) for p in self.parent)

    def leaf_ancestors(self) -> dict[str, list[str]]:
        """For each leaf, the list of codes from the leaf up to and including the total."""
        out: dict[str, list[str]] = {}
        for i, c in enumerate(self.codes):
            if self._children[i]:
                continue
            chain = [c]
            j = self.parent[i]
            while j != -1:
                chain.append(self.codes[j])
                j = self.parent[j]
            out[c] = chain
        return out

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_tree(cls, total: str, tree: dict[str, list[str]]) -> Hierarchy:
        """Build from a mapping parent code -> ordered child codes, rooted at ``total``."""
        codes: list[str] = []
        parent: list[int] = []
        on_path: set[str] = set()

        def visit(code: str, p: int) -> None:
            if code in on_path:
                raise HierarchyError("cyclic hierarchy entry", code=code)
            on_path.add(code)
            me = len(codes)
            codes.append(code)
            parent.append(p)
            for child in tree.get(code, []):
                visit(child, me)
            on_path.discard(code)

        visit(total, -1)
        return cls(tuple(codes), tuple(parent))

    @classmethod
    def flat(cls, codes: Iterable[str], total: str = DEFAULT_TOTAL, sort: bool = True) -> Hierarchy:
        """A one-level hierarchy: ``total`` with the given codes as children."""
        uniq = list(dict.fromkeys(str(c).strip() for c in codes))
        if total in uniq:
            raise HierarchyError("a code equals the total code", code=total)
        if sort:
            uniq.sort(key=natural_key)
        return cls((total, *uniq), (-1, *([0] * len(uniq))))

    @classmethod
    def from_hrc(
        cls,
        source: str | Path | Sequence[str],
        leadstring: str = "@",
        total: str = DEFAULT_TOTAL,
    ) -> Hierarchy:
        """Read a tau-ARGUS ``.hrc`` file: depth given by the number of leading ``leadstring``.

        The total itself is not listed in the file. Codes are stripped of surrounding blanks.
        """
        name = str(source) if isinstance(source, (str, Path)) else "<hrc>"
        if isinstance(source, (str, Path)):
            try:
                lines = Path(source).read_text(encoding="latin-1").splitlines()
            except OSError as exc:
                raise HierarchyError(f"cannot read hierarchy file: {exc.strerror}", file=name) from None
        else:
            lines = list(source)
        tree: dict[str, list[str]] = {total: []}
        stack: list[str] = [total]  # stack[d] = current node at depth d
        seen: dict[str, int] = {}
        for lineno, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            depth = 0
            rest = raw
            while rest.startswith(leadstring):
                depth += 1
                rest = rest[len(leadstring):]
            code = rest.strip()
            if not code:
                raise HierarchyError("empty code", file=name, line=lineno)
            if code in seen:
                raise HierarchyError(
                    f"code listed twice (first on line {seen[code]})", file=name, line=lineno, code=code
                )
            if code == total:
                raise HierarchyError("the total code may not be listed", file=name, line=lineno, code=code)
            seen[code] = lineno
            level = depth + 1  # depth 0 in the file = children of the total
            if level > len(stack):
                raise HierarchyError(
                    f"indentation jumps from depth {len(stack) - 1} to {depth}",
                    file=name,
                    line=lineno,
                    code=code,
                )
            del stack[level:]
            tree.setdefault(stack[-1], []).append(code)
            tree.setdefault(code, [])
            stack.append(code)
        if not seen:
            raise HierarchyError("the hierarchy file lists no codes (it is empty)", file=name)
        return cls.from_tree(total, tree)

    @classmethod
    def from_parent_child(
        cls,
        pairs: str | Path | Iterable[tuple[str, str]],
        total: str = DEFAULT_TOTAL,
    ) -> Hierarchy:
        """Build from ``(code, parent)`` pairs or a CSV file with columns ``code,parent``.

        A row whose parent is empty or the total code hangs below the total. Children keep
        the order of the rows.
        """
        name = str(pairs) if isinstance(pairs, (str, Path)) else "<pairs>"
        rows: list[tuple[int, str, str]] = []
        if isinstance(pairs, (str, Path)):
            import csv

            try:
                with open(pairs, newline="", encoding="utf-8") as fh:
                    reader = csv.reader(fh)
                    header = next(reader, None)
                    if header is None:
                        raise HierarchyError("empty hierarchy file", file=name)
                    cols = [h.strip().lower() for h in header]
                    if "code" not in cols or "parent" not in cols:
                        raise HierarchyError(
                            "parent-child file needs the columns 'code' and 'parent'", file=name, line=1
                        )
                    ci, pi = cols.index("code"), cols.index("parent")
                    for lineno, rec in enumerate(reader, start=2):
                        if not rec or all(not x.strip() for x in rec):
                            continue
                        if len(rec) <= max(ci, pi):
                            raise HierarchyError("row has too few fields", file=name, line=lineno)
                        rows.append((lineno, rec[ci].strip(), rec[pi].strip()))
            except OSError as exc:
                raise HierarchyError(f"cannot read hierarchy file: {exc.strerror}", file=name) from None
        else:
            rows = [(i + 1, str(c).strip(), "" if p is None else str(p).strip()) for i, (c, p) in enumerate(pairs)]
        if not rows:
            raise HierarchyError("the hierarchy file lists no codes (it is empty)", file=name)
        tree: dict[str, list[str]] = {total: []}
        parent_of: dict[str, str] = {}
        line_of: dict[str, int] = {}
        for lineno, code, par in rows:
            if not code:
                raise HierarchyError("empty code", file=name, line=lineno)
            if code == total:
                if par and par != total:
                    raise HierarchyError(
                        f"the total code cannot have a parent (here {par!r}): that makes a cycle",
                        file=name, line=lineno, code=code,
                    )
                continue  # an explicit row for the total without a parent is allowed
            if code in parent_of:
                raise HierarchyError(
                    f"code listed twice (first on line {line_of[code]})", file=name, line=lineno, code=code
                )
            par = par or total
            parent_of[code] = par
            line_of[code] = lineno
            tree.setdefault(par, []).append(code)
        for code, par in parent_of.items():
            if par != total and par not in parent_of:
                raise HierarchyError(f"parent {par!r} is not a known code", file=name, line=line_of[code], code=code)
        # cycle detection: every code must reach the total
        for code in parent_of:
            seen: set[str] = set()
            c = code
            while c != total:
                if c in seen:
                    raise HierarchyError("cyclic hierarchy entry", file=name, line=line_of[code], code=code)
                seen.add(c)
                c = parent_of[c]
        return cls.from_tree(total, tree)

    @classmethod
    def from_lengths(
        cls,
        codes: Iterable[str],
        lengths: Sequence[int],
        total: str = DEFAULT_TOTAL,
        cumulative: bool = True,
    ) -> Hierarchy:
        """Build from code prefixes: level ``j`` consists of the first ``lengths[j]`` characters.

        With ``cumulative=False`` the lengths are increments, as tau-ARGUS "hierarchy digits"
        (``3 1 1`` means prefixes of 3, 4 and 5 characters). Zero entries are ignored. The data
        codes must all have the full length.
        """
        inc = [int(x) for x in lengths if int(x) > 0]
        if not inc:
            raise HierarchyError("code lengths must contain a positive number")
        cum = list(np.cumsum(inc)) if not cumulative else inc
        if any(b <= a for a, b in itertools.pairwise(cum)):
            raise HierarchyError(f"code lengths must increase: {cum}")
        full = cum[-1]
        leaves = sorted({str(c).strip() for c in codes}, key=natural_key)
        tree: dict[str, list[str]] = {total: []}
        for c in leaves:
            if len(c) != full:
                raise HierarchyError(
                    f"code has length {len(c)} but the hierarchy needs {full} characters", code=c
                )
            prev = total
            for ln in cum:
                node = c[:ln]
                if node not in tree:
                    tree[node] = []
                    tree[prev].append(node)
                prev = node
        # a level that merely repeats its parent (same prefix) cannot happen: lengths increase
        return cls.from_tree(total, tree)

    def with_codes(self, extra: Iterable[str]) -> Hierarchy:
        """A copy with ``extra`` codes (unknown to the tree) added as children of the total."""
        add = [c for c in dict.fromkeys(extra) if c not in self._index]
        if not add:
            return self
        tree = {c: [self.codes[j] for j in self._children[i]] for i, c in enumerate(self.codes)}
        tree[self.total] = tree[self.total] + add
        return Hierarchy.from_tree(self.total, tree)
