"""How sensitivity rules and rule options are written down, declared once per class.

A rule or option is a frozen dataclass whose parameters are its fields. From them,
:class:`Spelled` writes the tablesafe rule string (``nk(2, 80)``, parsed again by
:func:`tablesafe.rules.parse_rules`), the tau-ARGUS batch form (``NK(2,80)``) and, where
the class gives a ``wording`` template, the sentence that describes it. A class only
says what differs from that default: its name in tau-ARGUS, its wording, the parameters
that may not be negative, or its own argument list when the rule string uses keywords.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar

from tablesafe.errors import RuleError


def num(x: float) -> str:
    """Short, exact-looking text for a parameter."""
    return f"{x:.12g}"


def _written(kind: str, value: Any) -> list[str]:
    """One parameter as text by its declared type: whole numbers as they are, flags as
    0/1, tuples of numbers one by one, other numbers with :func:`num`."""
    if kind == "bool":
        return [str(int(value))]
    if kind == "int":
        return [str(value)]
    if kind.startswith("tuple"):
        return [num(v) for v in value]
    return [num(value)]


class Spelled:
    """Base of rules and rule options: the rule string, the tau-ARGUS form and the
    description from the dataclass fields and a few class-level declarations."""

    tauargus_name: ClassVar[str | None] = None
    """The tau-ARGUS keyword (``P``, ``NK``, ``MAN``...), or None when tau-ARGUS has none."""

    wording: ClassVar[str] = ""
    """Template of :meth:`describe`; ``{0}``, ``{1}``... are the written arguments."""

    not_negative: ClassVar[tuple[tuple[str, str], ...]] = ()
    """Parameters that must be >= 0, with the words error messages name them by; checked
    on construction (by classes without a ``__post_init__`` of their own)."""

    @property
    def kind(self) -> str:
        """Short name of the family (``p``, ``pq``, ``nk``, ``man``...); the rule string's name."""
        raise NotImplementedError

    def __post_init__(self) -> None:
        for name, words in self.not_negative:
            value = getattr(self, name)
            if value < 0:
                raise RuleError(f"{words} must be >= 0, got {value}")

    def arguments(self) -> list[str]:
        """The arguments of the rule string, as text (default: every field, in order)."""
        out: list[str] = []
        for f in fields(self):  # type: ignore[arg-type]
            if f.init:
                out.extend(_written(str(f.type), getattr(self, f.name)))
        return out

    def tauargus_arguments(self) -> list[str]:
        """The arguments of the tau-ARGUS form (default: those of the rule string)."""
        return self.arguments()

    def describe(self) -> str:
        """One sentence saying what the rule or option does."""
        if not self.wording:
            raise NotImplementedError
        return self.wording.format(*self.arguments())

    def to_string(self) -> str:
        """The text that :func:`tablesafe.rules.parse_rules` turns back into this object."""
        return f"{self.kind}({', '.join(self.arguments())})"

    def to_tauargus(self) -> str | None:
        """The tau-ARGUS batch form, or None when tau-ARGUS has none."""
        if self.tauargus_name is None:
            return None
        return f"{self.tauargus_name}({','.join(self.tauargus_arguments())})"

    def __str__(self) -> str:
        return self.to_string()
