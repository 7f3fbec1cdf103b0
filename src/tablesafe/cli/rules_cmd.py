"""``tablesafe rules``: say in words what a rule string means, and convert between rules.

Rule strings follow DESIGN.md ("Rule strings"): ``p(15)``, ``p(15, n=2)``, ``pq(10, 50)``,
``nk(2, 80)``, ``freq(3)``, ``freq(3, range=10)``, ``zero(10)``, ``request(...)``, and
tau-ARGUS strings such as ``P(15,1)|FREQ(3,10)|NK(2,80)``. Each is read by the rules
stage (``tablesafe.rules.parse_rules``), which also gives its one-sentence description;
the formulas of the detail lines of the magnitude rules are written here.

Conversions use ``tablesafe.rules.params`` (seed 002_b3e6e013b0cc448d.txt "Relation between (2,k) and p%" and seed
003_fc219f942290b0f8.txt Table 1 and technical notes):

- (2,k) -> p%, the p% rule that the (2,k) rule is never stricter than (seed 002):
  ``p = 100 (100 - k) / k``;
- (2,k) -> p%, the p% rule that flags every cell the (2,k) rule flags (seed 003):
  ``p/100 = 200/k - 2``; back: ``k = 200 / (p/100 + 2)``;
- (1,k) -> p%, covering (seed 003): ``p/100 = 100/k - 1``; back: ``k = 100 / (p/100 + 1)``;
- (p,q) -> p% on the scale of the prior: ``p* = 100 p / q`` (seed 002).
"""

from __future__ import annotations

from dataclasses import dataclass

from tablesafe.errors import RuleError
from tablesafe.rules import parse_rules
from tablesafe.rules.model import NKRule, PQRule, PRule, Rule


@dataclass(frozen=True)
class RuleWords:
    """One parsed rule with its kind, parameters and meaning in words."""

    text: str
    kind: str
    args: dict[str, float]
    words: str


def _num(x: float) -> str:
    return f"{x:g}"


def _rest(c: int) -> str:
    """``X - x1 - x2`` or ``X - x1 - ... - x(c+1)``: what a coalition of c cannot see."""
    return "X - x1 - x2" if c <= 1 else f"X - x1 - ... - x{c + 1}"


def _p_words(p: float, n: int) -> str:
    who = "the second-largest contributor" if n <= 1 else f"a coalition of the {n} contributors after the largest"
    return (
        f"p% rule: a cell is sensitive when {who} could estimate the largest contribution to "
        f"within {_num(p)}% of its value by subtracting what they know from the cell total, i.e. "
        f"when {_rest(n)} < {_num(p)}/100 · x1. Its upper protection level is "
        f"{_num(p)}/100 · x1 - ({_rest(n)})."
    )


def _pq_words(p: float, q: float, n: int) -> str:
    return (
        f"(p,q) prior-posterior rule: everyone can estimate any contribution to within {_num(q)}% "
        f"beforehand; a cell is sensitive when publishing it lets "
        f"{'the second-largest contributor' if n <= 1 else f'a coalition of {n} contributors'} "
        f"estimate the largest contribution to within {_num(p)}%, i.e. when "
        f"{_num(q)}/100 · ({_rest(n)}) < {_num(p)}/100 · x1. "
        f"It flags the same cells as a p% rule with p* = 100·p/q = {_num(100 * p / q)}."
    )


def _nk_words(n: int, k: float) -> str:
    return (
        f"({n},{_num(k)}) dominance rule: a cell is sensitive when its {n} largest contributor(s) "
        f"together make up more than {_num(k)}% of the cell value (x1{' + ... + x' + str(n) if n > 1 else ''} > "
        f"{_num(k)}/100 · X). Its upper protection level is 100/{_num(k)} · (x1 + ... + x{n}) - X."
    )


def words_of(rule: Rule) -> RuleWords:
    """A parsed rule (:func:`tablesafe.rules.parse_rules`) with its formula in words for the
    magnitude rules p%, (p,q) and (n,k), and its one-sentence description otherwise."""
    text = rule.to_string()
    if isinstance(rule, PRule):
        return RuleWords(text, "p", {"p": rule.p, "n": rule.n}, _p_words(rule.p, rule.n))
    if isinstance(rule, PQRule):
        p, q = rule.p_upper, rule.q_upper
        return RuleWords(text, "pq", {"p": p, "q": q, "n": rule.n}, _pq_words(p, q, rule.n))
    if isinstance(rule, NKRule):
        return RuleWords(text, "nk", {"n": rule.n, "k": rule.k}, _nk_words(rule.n, rule.k))
    return RuleWords(text, rule.kind, {}, rule.describe())


def explain(text: str) -> list[RuleWords]:
    """Explain a rule string, which may hold several tau-ARGUS rules joined by ``|``;
    raises :class:`~tablesafe.errors.RuleError` on a string the rules stage cannot read."""
    if not text.strip():
        raise RuleError("empty rule string")
    return [words_of(r) for r in parse_rules(text)]


def parsed(text: str) -> list:
    """The rules stage's reading of a rule string (``tablesafe.rules.parse_rules``)."""
    return parse_rules(text)


# --------------------------------------------------------------------------- converting
def convert(rule: RuleWords, to: str) -> list[str]:
    """Equivalent or bounding rules of kind ``to`` (``p``, ``nk2``, ``nk1``), in words.

    The formulas are the rules stage's (``tablesafe.rules.params``).
    """
    from tablesafe.rules import params as rp

    to = to.lower().replace("(", "").replace(")", "").replace(",", "")
    out: list[str] = []
    if rule.kind not in ("p", "pq", "nk") or (rule.kind == "p" and to == "p"):
        return out  # nothing to convert
    if rule.kind == "nk" and to in ("nk2", "nk1", "nk") and f"nk{rule.args['n']}" in (to, "nk"):
        return out
    if rule.kind == "nk" and to == "p":
        n, k = rule.args["n"], rule.args["k"]
        if n == 2:
            out.append(
                f"p({rp.p_covering_k(k, 2):.2f}) flags every cell ({n},{_num(k)}) flags, and a few more "
                f"(Statistical Policy Working Paper 22: p/100 = 200/k - 2)"
            )
            out.append(
                f"p({rp.p_within_k2(k):.2f}) flags only cells ({n},{_num(k)}) flags: every "
                f"({n},{_num(k)})-safe cell is safe under it (Handbook on Statistical Disclosure Control; Working Paper 22: p = 100(100-k)/k)"
            )
        elif n == 1:
            out.append(f"p({rp.p_covering_k(k, 1):.2f}) flags every cell (1,{_num(k)}) flags (Statistical Policy Working Paper 22: p/100 = 100/k - 1)")
        else:
            raise RuleError(f"no conversion from a ({n},k) dominance rule to p% is defined (only n = 1 or 2)")
    elif rule.kind in ("p", "pq") and to in ("nk2", "nk", "2k", "nk1", "1k"):
        p = rule.args["p"] if rule.kind == "p" else rp.p_star(rule.args["p"], rule.args["q"])
        if to in ("nk2", "nk", "2k"):
            out.append(f"nk(2, {rp.k_covering_p(p, 2):.2f}) meets p({_num(p)}) where x1 = x2; every cell it flags, "
                       f"p({_num(p)}) flags too (Statistical Policy Working Paper 22: k = 200/(p/100 + 2))")
        else:
            out.append(f"nk(1, {rp.k_covering_p(p, 1):.2f}) meets p({_num(p)}) where x2 = 0; every cell it flags, "
                       f"p({_num(p)}) flags too (Statistical Policy Working Paper 22: k = 100/(p/100 + 1))")
    elif rule.kind == "pq" and to == "p":
        p, q = rule.args["p"], rule.args["q"]
        out.append(f"p({rp.p_star(p, q):.2f}): p* = 100·p/q flags exactly the same cells (Handbook on Statistical Disclosure Control)")
    else:
        raise RuleError(f"no conversion from a {rule.kind} rule to {to!r}; try --to p, --to nk2 or --to nk1")
    return out
