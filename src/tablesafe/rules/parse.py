"""Rule strings to rule objects.

One grammar covers the tablesafe spelling (``p(15)``, ``p(15, n=2)``, ``pq(10, 50)``,
``nk(2, 80)``, ``freq(3, range=10)``, ``zero(5)``, ``request(70, 50)``,
``linear(1, 0, -4)``, ``man(10)``) and the tau-ARGUS batch spelling (``P(15,1)``,
``NK(2,80)``, ``FREQ(3,10)``, ``ZERO(5)``, ``REQ(70,50,10)``, ``MAN(10)``, ``WGT(1)``,
``MIS(0)``): names are case-insensitive and several rules may be joined with ``|``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

import tablesafe.rules.model as model
from tablesafe.errors import RuleError
from tablesafe.rules.model import Rule
from tablesafe.rules.tauoptions import ManualRule, MissingOption, RuleOption, WeightOption

Token = Rule | RuleOption
"""What a rule string holds: sensitivity rules and tau-ARGUS options."""

_TOKEN = re.compile(r"^\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.DOTALL)

# name -> (positional parameter names, keyword aliases)
_SIGNATURES: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "p": (("p", "n"), {"c": "n", "intruders": "n"}),
    "pq": (("p", "q", "n"), {"c": "n", "intruders": "n", "pl": "p_lower", "pu": "p_upper",
                              "ql": "q_lower", "qu": "q_upper"}),
    "nk": (("n", "k"), {}),
    "freq": (("n", "range"), {"min": "n", "safety_range": "range"}),
    "zero": (("range",), {"safety_range": "range"}),
    "request": (("p1", "p2", "margin"), {"p": "p1", "safety_margin": "margin"}),
    "man": (("margin",), {"safety_margin": "margin"}),
    "wgt": (("apply",), {}),
    "mis": (("safe",), {}),
}
_ALIASES = {"req": "request", "dom": "nk", "dominance": "nk", "frequency": "freq",
            "manual": "man", "ppercent": "p", "prior": "pq", "weights": "wgt", "missing": "mis"}


def _split_top(s: str) -> list[str]:
    """Split on ``|`` outside parentheses."""
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in (x.strip() for x in parts) if p]


def _number(text: str, rule: str) -> float | str:
    t = text.strip()
    try:
        v = float(t)
    except ValueError:
        if re.fullmatch(r"[A-Za-z_]+", t):
            return t
        raise RuleError(f"rule {rule!r}: {t!r} is not a number") from None
    if not math.isfinite(v):
        raise RuleError(f"rule {rule!r}: {t!r} is not a finite number")
    return v


def _parse_one(token: str) -> Token:
    m = _TOKEN.match(token)
    if not m:
        raise RuleError(
            f"cannot read rule {token!r}: expected NAME(arguments), e.g. p(15), nk(2, 80), freq(3, range=10) "
            "or the tau-ARGUS form P(15,1)|FREQ(3,10)"
        )
    name = m.group(1).lower()
    name = _ALIASES.get(name, name)
    body = m.group(2).strip()
    args: list[float | str] = []
    kwargs: dict[str, float | str] = {}
    if name == "linear":
        if not body:
            raise RuleError(f"rule {token!r}: linear() needs weights")
        weights = [_number(x, token) for x in body.split(",")]
        if any(isinstance(w, str) for w in weights):
            raise RuleError(f"rule {token!r}: linear weights must be numbers")
        return model.LinearRule(tuple(float(w) for w in weights))  # type: ignore[arg-type]
    if name not in _SIGNATURES:
        known = ", ".join(sorted(set(_SIGNATURES) | {"linear"}))
        raise RuleError(f"unknown rule {m.group(1)!r} in {token!r}; known rules: {known}")
    positional, aliases = _SIGNATURES[name]
    if body:
        for part in body.split(","):
            part = part.strip()
            if not part:
                raise RuleError(f"rule {token!r}: empty argument")
            if "=" in part:
                k, v = part.split("=", 1)
                k = k.strip().lower()
                k = aliases.get(k, k)
                if k in kwargs:
                    raise RuleError(f"rule {token!r}: argument {k!r} given twice")
                kwargs[k] = _number(v, token)
            else:
                if kwargs:
                    raise RuleError(f"rule {token!r}: positional argument after keyword arguments")
                args.append(_number(part, token))
    if len(args) > len(positional):
        raise RuleError(f"rule {token!r}: too many arguments (at most {len(positional)}: {', '.join(positional)})")
    for k, v in zip(positional, args):
        if k in kwargs:
            raise RuleError(f"rule {token!r}: argument {k!r} given twice")
        kwargs[k] = v
    try:
        return _build(name, kwargs, token)
    except TypeError as exc:  # unknown keyword
        raise RuleError(f"rule {token!r}: {exc}") from None


def _int(v: float | str, what: str, token: str) -> int:
    if isinstance(v, str) or int(v) != v:
        raise RuleError(f"rule {token!r}: {what} must be a whole number, got {v}")
    return int(v)


def _float(v: float | str | None, what: str, token: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, str):
        raise RuleError(f"rule {token!r}: {what} must be a number, got {v!r}")
    return float(v)


def _check_keys(kwargs: dict, allowed: Iterable[str], token: str) -> None:
    extra = set(kwargs) - set(allowed)
    if extra:
        raise RuleError(f"rule {token!r}: unknown argument(s) {', '.join(sorted(extra))}; allowed: {', '.join(allowed)}")


def _build(name: str, kw: dict, token: str) -> Token:
    if name == "p":
        _check_keys(kw, ("p", "n"), token)
        if "p" not in kw:
            raise RuleError(f"rule {token!r}: the p% rule needs p, e.g. p(15)")
        return model.PRule(_float(kw["p"], "p", token), _int(kw.get("n", 1), "n", token))  # type: ignore[arg-type]
    if name == "pq":
        _check_keys(kw, ("p", "q", "n", "p_lower", "p_upper", "q_lower", "q_upper", "prior"), token)
        p = _float(kw.get("p"), "p", token)
        q = _float(kw.get("q"), "q", token)
        pl = _float(kw.get("p_lower", p), "p_lower", token)
        pu = _float(kw.get("p_upper", p), "p_upper", token)
        ql = _float(kw.get("q_lower", q), "q_lower", token)
        qu = _float(kw.get("q_upper", q), "q_upper", token)
        if None in (pl, pu, ql, qu):
            raise RuleError(f"rule {token!r}: the (p,q) rule needs p and q (or p_lower, p_upper, q_lower, q_upper)")
        prior = kw.get("prior", "strong")
        if not isinstance(prior, str):
            raise RuleError(f"rule {token!r}: prior must be strong or weak")
        return model.PQRule(pl, ql, pu, qu, _int(kw.get("n", 1), "n", token), prior.lower())  # type: ignore[arg-type]
    if name == "nk":
        _check_keys(kw, ("n", "k"), token)
        if "n" not in kw or "k" not in kw:
            raise RuleError(f"rule {token!r}: the dominance rule needs n and k, e.g. nk(2, 80)")
        return model.NKRule(_int(kw["n"], "n", token), _float(kw["k"], "k", token))  # type: ignore[arg-type]
    if name == "freq":
        _check_keys(kw, ("n", "range"), token)
        if "n" not in kw:
            raise RuleError(f"rule {token!r}: the frequency rule needs the minimum frequency, e.g. freq(3)")
        rng = _float(kw.get("range"), "range", token)
        return model.FreqRule(_int(kw["n"], "n", token), 10.0 if rng is None else rng)
    if name == "zero":
        _check_keys(kw, ("range",), token)
        rng = _float(kw.get("range"), "range", token)
        return model.ZeroRule(0.0 if rng is None else rng)
    if name == "request":
        _check_keys(kw, ("p1", "p2", "margin"), token)
        if "p1" not in kw:
            raise RuleError(f"rule {token!r}: the request rule needs a percentage, e.g. request(70)")
        return model.RequestRule(
            _float(kw["p1"], "p1", token),  # type: ignore[arg-type]
            _float(kw.get("p2"), "p2", token),
            _float(kw.get("margin"), "margin", token),
        )
    if name == "man":
        _check_keys(kw, ("margin",), token)
        m = _float(kw.get("margin"), "margin", token)
        return ManualRule(10.0 if m is None else m)
    if name == "wgt":
        _check_keys(kw, ("apply",), token)
        return WeightOption(bool(_int(kw.get("apply", 1), "apply", token)))
    if name == "mis":
        _check_keys(kw, ("safe",), token)
        return MissingOption(bool(_int(kw.get("safe", 0), "safe", token)))
    raise RuleError(f"unknown rule {token!r}")  # pragma: no cover


def parse_rules(rules: str | Token | Iterable[str | Token]) -> list[Token]:
    """Parse rule strings (or pass rule objects through) into a list of rules and options.

    Accepts one string, possibly several rules joined with ``|`` (tau-ARGUS style), or a
    list of strings and :class:`Rule` objects. Raises :class:`RuleError` naming the rule
    at fault. Several p%, (p,q), (n,k) and linear rules may be combined: a cell is then
    sensitive when any of them says so, and its levels are the maximum. The tau-ARGUS
    options among them (``MAN``, ``WGT``, ``MIS``) come back as :class:`RuleOption`
    objects; :class:`tablesafe.rules.RuleSet` settles them.
    """
    if isinstance(rules, (str, Rule, RuleOption)):
        rules = [rules]
    out: list[Token] = []
    for r in rules:
        if isinstance(r, (Rule, RuleOption)):
            out.append(r)
            continue
        if not isinstance(r, str):
            raise RuleError(f"a rule must be a string or a Rule, got {type(r).__name__}")
        tokens = _split_top(r)
        if not tokens:
            raise RuleError(f"empty rule string {r!r}")
        out.extend(_parse_one(t) for t in tokens)
    if not out:
        raise RuleError("no sensitivity rule given")
    return out


def rules_to_string(rules: Iterable[Token]) -> str:
    """Rules joined with ``|`` in the tablesafe spelling (parses back with parse_rules)."""
    return "|".join(r.to_string() for r in rules)


def rules_to_tauargus(rules: Iterable[Token]) -> str:
    """Rules in tau-ARGUS batch form; raises RuleError for rules tau-ARGUS lacks."""
    out = []
    for r in rules:
        t = r.to_tauargus()
        if t is None:
            raise RuleError(f"tau-ARGUS has no form of rule {r.to_string()!r}")
        out.append(t)
    return "|".join(out)
