"""``tablesafe rules``: say in words what a rule string means, and convert between rules.

Rule strings follow DESIGN.md ("Rule strings"): ``p(15)``, ``p(15, n=2)``, ``pq(10, 50)``,
``nk(2, 80)``, ``freq(3)``, ``freq(3, range=10)``, ``zero(10)``, ``request(...)``, and
tau-ARGUS strings such as ``P(15,1)|FREQ(3,10)|NK(2,80)``. Each is read by the rules
stage (``tablesafe.rules.parse_rules``), which also gives its one-sentence description;
the formulas of the detail lines are written here.

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

import re
from dataclasses import dataclass

from tablesafe.errors import RuleError


@dataclass
class RuleWords:
    """One rule string with its parsed kind, parameters and meaning in words."""

    text: str
    kind: str
    args: dict[str, float]
    words: str


_CALL = re.compile(r"^\s*([A-Za-z]+)\s*(?:\((.*)\))?\s*$")


def _split_args(body: str) -> tuple[list[float], dict[str, float]]:
    pos: list[float] = []
    kw: dict[str, float] = {}
    for part in [p.strip() for p in body.split(",") if p.strip()]:
        name, eq, val = part.partition("=")
        try:
            if eq:
                kw[name.strip().lower()] = float(val)
            else:
                pos.append(float(part))
        except ValueError:
            raise RuleError(f"rule argument {part!r} is not a number") from None
    return pos, kw


def _num(x: float) -> str:
    return f"{x:g}"


def _rest(c: int) -> str:
    """``X - x1 - x2`` or ``X - x1 - ... - x(c+1)``: what a coalition of c cannot see."""
    return "X - x1 - x2" if c <= 1 else f"X - x1 - ... - x{c + 1}"


def explain_one(text: str, *, tau_position: int | None = None) -> RuleWords:
    """Explain one rule (``p(15)``, ``NK(2,80)``, ...). Raises RuleError on bad syntax."""
    m = _CALL.match(text)
    if not m:
        raise RuleError(f"cannot read the rule {text!r}; write e.g. p(15), nk(2, 80) or freq(3)")
    name, body = m.group(1).lower(), m.group(2) or ""
    pos, kw = _split_args(body)
    tau = text.strip()[:1].isupper() and name in ("p", "nk", "freq", "zero", "man", "req", "wgt", "mis")

    def need(k: int) -> None:
        if len(pos) < k:
            raise RuleError(f"the rule {text!r} needs {k} number(s) in parentheses")

    if name == "p":
        need(1)
        p = pos[0]
        n = kw.get("n", pos[1] if tau and len(pos) > 1 else (pos[1] if len(pos) > 1 else 1))
        coalition = int(n)
        who = (
            "the second-largest contributor"
            if coalition <= 1
            else f"a coalition of the {coalition} contributors after the largest"
        )
        words = (
            f"p% rule: a cell is sensitive when {who} could estimate the largest contribution to "
            f"within {_num(p)}% of its value by subtracting what they know from the cell total, i.e. "
            f"when {_rest(coalition)} < {_num(p)}/100 · x1. Its upper protection level is "
            f"{_num(p)}/100 · x1 - ({_rest(coalition)})."
        )
        return RuleWords(text, "p", {"p": p, "n": coalition}, words)
    if name == "pq":
        need(2)
        p, q = pos[0], pos[1]
        n = int(kw.get("n", pos[2] if len(pos) > 2 else 1))
        words = (
            f"(p,q) prior-posterior rule: everyone can estimate any contribution to within {_num(q)}% "
            f"beforehand; a cell is sensitive when publishing it lets "
            f"{'the second-largest contributor' if n <= 1 else f'a coalition of {n} contributors'} "
            f"estimate the largest contribution to within {_num(p)}%, i.e. when "
            f"{_num(q)}/100 · ({_rest(n)}) < {_num(p)}/100 · x1. "
            f"It flags the same cells as a p% rule with p* = 100·p/q = {_num(100 * p / q)}."
        )
        return RuleWords(text, "pq", {"p": p, "q": q, "n": n}, words)
    if name == "nk":
        need(2)
        n, k = int(pos[0]), pos[1]
        words = (
            f"({n},{_num(k)}) dominance rule: a cell is sensitive when its {n} largest contributor(s) "
            f"together make up more than {_num(k)}% of the cell value (x1{' + ... + x' + str(n) if n > 1 else ''} > "
            f"{_num(k)}/100 · X). Its upper protection level is 100/{_num(k)} · (x1 + ... + x{n}) - X."
        )
        return RuleWords(text, "nk", {"n": n, "k": k}, words)
    if name == "freq":
        need(1)
        n = int(pos[0])
        rng = kw.get("range", pos[1] if len(pos) > 1 else 0.0)
        prot = (
            f"it must then be protected by {_num(rng)}% of its value in both directions"
            if rng > 0
            else "it must then merely not be exactly recalculable"
        )
        words = (
            f"minimum frequency rule: a cell with fewer than {n} contributors (holdings when a holding "
            f"variable is given) is sensitive; {prot}."
        )
        return RuleWords(text, "freq", {"n": n, "range": rng}, words)
    if name == "zero":
        rng = pos[0] if pos else kw.get("range", 0.0)
        words = (
            "zero rule: a cell whose contributions are all zero (but which has contributors) is "
            f"sensitive, with a protection range of {_num(rng)} (absolute, since the value is 0)."
        )
        return RuleWords(text, "zero", {"range": rng}, words)
    if name == "man":
        rng = pos[0] if pos else 0.0
        words = (
            f"manual safety range: cells marked unsafe by hand (status in the input or an a priori "
            f"file) get protection levels of {_num(rng)}% of their value."
        )
        return RuleWords(text, "man", {"range": rng}, words)
    if name in ("request", "req"):
        words = (
            "request rule (foreign trade): a cell is sensitive only when a contributor that asked "
            "for protection dominates it by the given parameters"
            + (f" ({', '.join(_num(x) for x in pos)})" if pos else "")
            + "."
        )
        return RuleWords(text, "request", {f"a{i}": v for i, v in enumerate(pos)}, words)
    if name in ("wgt", "mis"):
        what = "apply sampling weights" if name == "wgt" else "cells with missing codes are safe"
        return RuleWords(text, name, {"on": pos[0] if pos else 1}, f"tau-ARGUS switch: {what} ({_num(pos[0]) if pos else '1'}).")
    raise RuleError(
        f"unknown rule {m.group(1)!r} in {text!r}; known: p, pq, nk, freq, zero, request "
        "(tau-ARGUS: P, NK, FREQ, ZERO, MAN, REQ)"
    )


def explain(text: str) -> list[RuleWords]:
    """Explain a rule string, which may hold several tau-ARGUS rules joined by ``|``."""
    parts = [t for t in (s.strip() for s in text.split("|")) if t]
    if not parts:
        raise RuleError("empty rule string")
    return [explain_one(t) for t in parts]


def parsed(text: str) -> list:
    """The rules stage's reading of a rule string (``tablesafe.rules.parse_rules``)."""
    from tablesafe.rules import parse_rules

    return parse_rules(text)


# --------------------------------------------------------------------------- converting
def convert(rule: RuleWords, to: str) -> list[str]:
    """Equivalent or bounding rules of kind ``to`` (``p``, ``nk2``, ``nk1``), in words.

    The formulas are the rules stage's (``tablesafe.rules.params``).
    """
    from tablesafe.rules import params as rp

    to = to.lower().replace("(", "").replace(")", "").replace(",", "")
    out: list[str] = []
    if rule.kind in ("freq", "zero", "man", "request", "wgt", "mis") or (rule.kind == "p" and to == "p"):
        return out  # nothing to convert
    if rule.kind == "nk" and to in ("nk2", "nk1", "nk") and f"nk{rule.args['n']}" in (to, "nk"):
        return out
    if rule.kind == "nk" and to == "p":
        n, k = rule.args["n"], rule.args["k"]
        if n == 2:
            out.append(
                f"p({rp.p_covering_k2(k):.2f}) flags every cell ({n},{_num(k)}) flags, and a few more "
                f"(Statistical Policy Working Paper 22: p/100 = 200/k - 2)"
            )
            out.append(
                f"p({rp.p_within_k2(k):.2f}) flags only cells ({n},{_num(k)}) flags: every "
                f"({n},{_num(k)})-safe cell is safe under it (Handbook on Statistical Disclosure Control; Working Paper 22: p = 100(100-k)/k)"
            )
        elif n == 1:
            out.append(f"p({rp.p_covering_k1(k):.2f}) flags every cell (1,{_num(k)}) flags (Statistical Policy Working Paper 22: p/100 = 100/k - 1)")
        else:
            raise RuleError(f"no conversion from a ({n},k) dominance rule to p% is defined (only n = 1 or 2)")
    elif rule.kind in ("p", "pq") and to in ("nk2", "nk", "2k", "nk1", "1k"):
        p = rule.args["p"] if rule.kind == "p" else rp.p_star(rule.args["p"], rule.args["q"])
        if to in ("nk2", "nk", "2k"):
            out.append(f"nk(2, {rp.k2_covering_p(p):.2f}) meets p({_num(p)}) where x1 = x2; every cell it flags, "
                       f"p({_num(p)}) flags too (Statistical Policy Working Paper 22: k = 200/(p/100 + 2))")
        else:
            out.append(f"nk(1, {rp.k1_covering_p(p):.2f}) meets p({_num(p)}) where x2 = 0; every cell it flags, "
                       f"p({_num(p)}) flags too (Statistical Policy Working Paper 22: k = 100/(p/100 + 1))")
    elif rule.kind == "pq" and to == "p":
        p, q = rule.args["p"], rule.args["q"]
        out.append(f"p({rp.p_star(p, q):.2f}): p* = 100·p/q flags exactly the same cells (Handbook on Statistical Disclosure Control)")
    else:
        raise RuleError(f"no conversion from a {rule.kind} rule to {to!r}; try --to p, --to nk2 or --to nk1")
    return out
