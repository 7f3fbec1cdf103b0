"""Helpers for choosing rule parameters: relations between p%, (p,q) and (n,k) rules.

Formulas from seed 002 ("p%-rule and dominance-rule", "The (p,q)-rule", "Negative
contributions") and seed 003 (B.1.d, Table 1, and the Technical Notes). All take and
return percentages (``p = 10`` means 10 %).
"""

from __future__ import annotations

from tablesafe.errors import RuleError


def _pos(x: float, name: str) -> None:
    if not x > 0:
        raise RuleError(f"{name} must be positive, got {x}")


def _pct(k: float, name: str = "k") -> None:
    if not 0 < k < 100:
        raise RuleError(f"{name} must lie strictly between 0 and 100, got {k}")


def _n_of(n: int) -> None:
    if n not in (1, 2):
        raise RuleError(f"n must be 1 or 2 (the (1,k) or (2,k) rule), got {n}")


def _k_for_p(p: float, a: int, b: int) -> float:
    """The dominance parameter ``k = 100 a/(p/100 + b)`` of seed 003's relations between
    p% and (n,k) rules (``a``, ``b``: 1, 1 for (1,k) covering; 2, 2 for (2,k) covering;
    1, 2 for (1,k) within)."""
    return 100.0 * a / (p / 100.0 + b)


def _p_for_k(k: float, a: int, b: int) -> float:
    """The inverse of :func:`_k_for_p`: ``p/100 = 100 a/k - b``."""
    return 100.0 * (100.0 * a / k - b)


def k2_from_p_seed002(p: float) -> float:
    """(2,k) rule corresponding to a p% rule, ``k = 100 * 100/(100 + p)`` (seed 002).

    Every cell safe under this (2,k) rule is safe under the p% rule (seed 002, proof of A).
    """
    _pos(p, "p")
    return 100.0 * 100.0 / (100.0 + p)


def p_from_k2_seed002(k: float) -> float:
    """Inverse of :func:`k2_from_p_seed002`: ``p = 100 (100 - k)/k`` ((2,80) -> p = 25)."""
    _pct(k)
    return 100.0 * (100.0 - k) / k


def k_covering_p(p: float, n: int) -> float:
    """(n,k) rule (``n`` = 1 or 2) whose sensitive cells are all sensitive under the p% rule.

    ``k1 = 100/(p/100 + 1)`` and ``k2 = 200/(p/100 + 2)`` (seed 003 Technical Notes;
    Table 1 columns x1/T and (x1+x2)/T).
    """
    _pos(p, "p")
    _n_of(n)
    return _k_for_p(p, n, n)


def p_covering_k(k: float, n: int) -> float:
    """Most lenient p% rule that still flags every (n,k)-sensitive cell (``n`` = 1 or 2).

    ``p/100 = 100/k1 - 1`` and ``p/100 = 200/k2 - 2`` ((2,85) -> 35.29).
    """
    _pct(k, f"k{n}")
    _n_of(n)
    return _p_for_k(k, n, n)


def p_within_k2(k2: float) -> float:
    """p% rule all of whose sensitive cells are (2,k2)-sensitive: ``p/100 = (100 - k2)/k2`` ((2,85) -> 17.65).

    Seed 003 Technical Notes ("To find p so that S^p% <= S^(n,k)"); the same formula as
    seed 002's replacement of a (2,k) rule by a p% rule.
    """
    _pct(k2, "k2")
    return 100.0 * (100.0 - k2) / k2


def p_within_k1(k1: float) -> float:
    """p% rule all of whose sensitive cells are (1,k1)-sensitive: ``p/100 = 100/k1 - 2`` (seed 003).

    Negative for k1 > 50 (then no p% rule fits inside the (1,k1) region).
    """
    _pct(k1, "k1")
    return _p_for_k(k1, 1, 2)


def k1_within_p(p: float) -> float:
    """(1,k1) rule whose sensitive region contains that of the p% rule on z1 = z2: ``k1 = 100/(p/100 + 2)`` (seed 003)."""
    return _k_for_p(p, 1, 2)


def p_star(p: float, q: float) -> float:
    """The p% rule equivalent to a (p,q) rule: ``p* = 100 p/q`` (seed 002 eq. p-star)."""
    _pos(p, "p")
    _pos(q, "q")
    return 100.0 * p / q


def information_gain(p: float, q: float | None = None) -> float:
    """The ratio ``q/p`` of seed 003 (B.1.b, Table 1); for a p% rule ``100/p``."""
    _pos(p, "p")
    return (100.0 if q is None else q) / p


def k_star(k: float, q: float) -> float:
    """Dominance parameter for q* = 100 given k and q: ``(100 - k*)/100 = (100 - k)/q`` (seed 002 eq. k-star)."""
    _pct(k)
    _pos(q, "q")
    return 100.0 - 100.0 * (100.0 - k) / q


def p_negative(p: float, f: float) -> float:
    """p% parameter for data with negative contributions: ``p_f = p/f`` with ``f > 1`` (seed 002)."""
    _pos(p, "p")
    if not f >= 1:
        raise RuleError(f"the factor f for negative contributions must be >= 1, got {f}")
    return p / f


def k_negative(k: float, f: float) -> float:
    """Dominance parameter for negative contributions: ``(100 - k_f)/100 = (100 - k)/(100 f)`` (seed 002)."""
    _pct(k)
    if not f >= 1:
        raise RuleError(f"the factor f for negative contributions must be >= 1, got {f}")
    return 100.0 - (100.0 - k) / f
