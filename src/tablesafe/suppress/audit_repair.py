"""Repair of a large pattern guided by the audit instead of one attacker LP per target.

The plain repair (:func:`tablesafe.suppress.protection.repair`) solves every target's
attacker LP to find the ones that fail; on a three-way table of 13,000 cells with blocks
of thousands of withheld cells those LPs alone run for many minutes. The audit
(:func:`tablesafe.audit.audit`) answers the same question in bulk: implied bounds, batch
LPs that push many targets to their goals at once, and insiders decided together. Here
the audit names the failing (target, direction, insider) attacks, and only those get an
attacker LP of their own, for the dual that says which cells to withhold
(:func:`~tablesafe.suppress.protection.revise`). The loop ends when the audit
passes, which is then also the pattern's proof.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from tablesafe.audit.lp import LPOutOfTime
from tablesafe.audit.result import AuditResult
from tablesafe.errors import AuditFailure
from tablesafe.problem import Problem
from tablesafe.suppress.attack_parts import in_parts, key_halves
from tablesafe.suppress.attacker import DOWN, UP, Attack, Bounds
from tablesafe.suppress.cover import Revisable
from tablesafe.suppress.protection import (
    JOINT_ROUNDS,
    Key,
    OutOfTime,
    Stubborn,
    candidates,
    failing,
    revise,
    run_attacks,
    still_holds,
    widen,
)
from tablesafe.suppress.settled import Audited

_DIRECTIONS = {"upper": (UP,), "lower": (DOWN,), "exact": (UP, DOWN), "sliding": (UP, DOWN)}


RECHECK_SHARE = 0.5
"""Share of the last audit's seconds a later round's audit is expected to take, when the
repair judges whether it still fits before its deadline: after the first, the single
respondents are checked only where something changed and the last audit's tables settle
most verdicts. Measured on the generated 61,215-cell two-way table with holdings (no
limit, fifty-fourth session): audits of 24, 8 and 2 s. Taking the last audit's whole
time, a 120 s limit (repair deadline at 90 s) gave up before the second round at about
65 s, and the certificates completed the pattern: 233.6 M of secondaries against 19.24 M
when the repair ends (at 77 s)."""

AUDIT_STUBBORN_FAILS = 8
"""Failures of one attack within an audit round before its own protection LP picks its
complements. Later than in the plain repair: on a large table that LP is slow (38.6 s on
the generated 61,215-cell two-way table, whose repair converges without it), while the
capacity inequalities settle most attacks within a few rounds."""


def audit_failures(problem: Problem, withheld: np.ndarray, bounds: Bounds) -> list[Key]:
    """The failing attacks the audit finds on ``withheld``, as (target, direction, insider)."""
    return _failures(problem, withheld, bounds)[0]


def _failures(problem: Problem, withheld: np.ndarray, bounds: Bounds,
              recheck: tuple[np.ndarray, np.ndarray] | None = None,
              seeds: dict | None = None, deadline: float | None = None,
              log=None) -> tuple[list[Key], AuditResult]:
    """:func:`audit_failures` and the audit they come from (``recheck``, ``seeds``,
    ``deadline``: see :func:`tablesafe.audit.audit`; its feasible tables are kept;
    ``log`` hears its progress)."""
    from tablesafe.audit import audit

    res = audit(problem, withheld, insider=bool(bounds.singleton.any()), recheck=recheck,
                seeds=seeds, keep_tables=True, deadline=deadline, progress=log or False)
    keys: set[Key] = set()
    sens = problem.sensitive
    for k in np.flatnonzero(sens & (res.verdict != "protected")).tolist():
        for d in _DIRECTIONS.get(str(res.verdict[k]), (UP, DOWN)):
            if (bounds.req_up[k] if d == UP else bounds.req_dn[k]) > 0 or bounds.req_sl[k] > 0:
                keys.add((k, d, -1))
    found = getattr(res, "insider_findings", None)
    if isinstance(found, pd.DataFrame) and len(found):
        index = pd.Index(problem.names.astype(str))
        tgt = index.get_indexer(found["target"].astype(str))
        # the attacker is named by its cell ("sole contributor of <cell>")
        cells = found["attacker"].astype(str).str.replace(r"^sole contributor of ", "", regex=True)
        att = index.get_indexer(cells)
        for k, s, v in zip(tgt.tolist(), att.tolist(), found["verdict"].astype(str)):
            if k < 0 or s < 0:
                continue
            for d in _DIRECTIONS.get(v, (UP, DOWN)):
                keys.add((k, d, s))
    return sorted(keys), res


def repair_audit(problem: Problem, withheld: np.ndarray, bounds: Bounds, recheck: tuple[np.ndarray, np.ndarray],
                 seeds: dict, log=None) -> tuple[list[Key], AuditResult]:
    """A later round's audit of the repair (the failing attacks and the audit) of a
    pattern ``withheld`` that grew from one an earlier round audited: ``recheck`` and
    ``seeds`` as :func:`tablesafe.audit.audit` takes them, no deadline."""
    return _failures(problem, withheld, bounds, recheck, seeds, None, log)


HALVES_FROM = 200
"""Fewest attacks named in one inner round that are attacked in two halves
(:func:`tablesafe.suppress.attack_parts.key_halves`), side by side where two CPUs are
free, each half on models of its own (so the same attacks with one worker or two). On the
generated 61,215-cell two-way table the first audit names 1,308 failing attacks, most in
one block of 13,679 cells, whose attacker LPs took 36 s one after the other."""


RELAX_FIRST = True
"""The attacks expected to fail (named by the audit, or failed in the round before) are
tried on relaxations around their targets first
(:mod:`tablesafe.suppress.relaxed_attacks`): a relaxation that misses the level proves
the failure and gives the capacity inequality with a small LP instead of the block's.
The attacks attacked again because a revision gave up a cell their table moved mostly
pass, and go to the block's LP directly (on the generated 61,215-cell two-way table,
relaxing them too cost 22.6 s in relaxations that mostly did not decide, against 1.4 s
for those the audit named). On `modular`'s subtable pattern of the generated
13,851-cell three-way table the repair's attacks took about 4 minutes instead of 7."""


def _attacks(problem: Problem, bounds: Bounds, w: np.ndarray, keys: list[Key], deadline: float,
             relax: set[Key] | None = None) -> dict:
    """The attacker LPs (with duals) of ``keys`` on pattern ``w``, in halves from
    :data:`HALVES_FROM` keys; those of ``relax`` on relaxations first."""
    x = w.astype(float)
    relax = relax or set()

    def attack(part: list[Key]) -> dict:
        out = {}
        for first in (True, False):
            some = [key for key in part if (key in relax) == first]
            if some:
                out.update(run_attacks(problem, bounds, x, some, split_insiders=False, sparse=False,
                                       deadline=deadline, relax_first=first))
        return out

    return in_parts(attack, key_halves(keys, HALVES_FROM), OutOfTime)


def audit_repair(problem: Problem, bounds: Bounds, withheld: np.ndarray, *,
                 max_rounds: int = 50, log=None) -> tuple[np.ndarray, int]:
    """Withhold more cells until the audit passes; returns (pattern, rounds).

    ``problem`` must hold its relations as they are for the true values (the audit's
    model). Each round: the audit's failing attacks, an attacker LP for each (with its
    dual), the cheapest complements that satisfy their capacity inequalities.
    """
    w, rounds, _ = audit_repair_proved(problem, bounds, withheld, max_rounds=max_rounds, log=log)
    return w, rounds


def audit_repair_proved(problem: Problem, bounds: Bounds, withheld: np.ndarray, *,
                        max_rounds: int = 50, log=None, deadline: float = float("inf"),
                        seeds: dict | None = None) -> tuple[np.ndarray, int, AuditResult]:
    """:func:`audit_repair`, also returning the audit the pattern passed (its proof).

    The pattern only grows, and withholding more cells only widens every attacker's
    interval, so after the first round the single respondents are checked again only
    against the targets that failed and by the respondents of cells withheld since; and
    the feasible tables of the last audit, still feasible, settle the criterion-1
    verdicts they reach (on the generated 61,215-cell two-way table the second and third
    audits' criterion 1 took 22 s each without them). The audit returned says so
    (``stats["insider_recheck"]``, ``stats["audit_rounds"]``, ``stats["seeds"]``).

    ``seeds``: feasible tables known before the first audit (the subtables' certificates,
    as ``audit(..., seeds=...)`` takes them).

    ``deadline`` (a ``time.monotonic()`` value): a round is not started when its audit,
    taken to last :data:`RECHECK_SHARE` of the previous one's, would end past it, nor a
    repair step past it; :class:`OutOfTime` then carries the pattern as far as it got
    (not proved safe), the round's latest attacks and what the last audit that ended
    proved (:class:`~tablesafe.suppress.settled.Audited`), so that a completion need not
    search again for the targets settled (:mod:`tablesafe.suppress.settled`).
    """
    w = withheld.copy() | problem.sensitive
    cand = candidates(problem, bounds)
    say = log or (lambda *_: None)
    recheck = None
    given = seeds
    last = 0.0
    audited: Audited | None = None  # what the last audit that ended proved
    latest: dict[Key, Attack] = {}  # the round's latest attack of each key

    def out_of_time() -> OutOfTime:
        return OutOfTime(w, dict(latest), audited)

    for rounds in range(max_rounds + 1):
        t0 = time.monotonic()
        if t0 + RECHECK_SHARE * last > deadline:
            raise out_of_time()
        say(f"audit repair round {rounds + 1}: auditing {int(w.sum()):,} withheld cells"
            + (" (single respondents: what changed)" if recheck is not None else ""))
        try:
            # the audit starts no LP past the deadline either: on the generated
            # 61,215-cell two-way table the first one takes about 50 s, and under a 60 s
            # limit it had started with 24 s left
            keys, result = _failures(problem, w, bounds, recheck, seeds, deadline, log)
        except LPOutOfTime:
            raise out_of_time() from None
        last = time.monotonic() - t0
        say(f"audit repair round {rounds + 1}: the audit names {len(keys)} failing attack(s) "
            f"({last:.0f} s)")
        if not keys:
            result.stats["audit_rounds"] = rounds + 1
            return w, rounds, result
        before, keys_named = w.copy(), keys
        named = np.zeros(problem.n, dtype=bool)
        named[[key[0] for key in keys]] = True
        audited = Audited(pattern=before, named=named, tables={**(seeds or {}), **result.tables}, seconds=last)
        # withholding more cells only widens the attacker's intervals, so the attacks the
        # audit named are repaired on their own (attacker LP, complements, again) and the
        # next audit only confirms; the complements are chosen together against every
        # inequality this round's attacks gave so far, on top of the pattern the audit
        # saw (so the pattern only grows from audit to audit), and every attack that
        # failed is attacked again unless its last table still stands
        choice = Revisable(w, problem.cost)
        ever: set[Key] = set()
        latest = {}
        # as in the plain repair (which does so from the first failure), an attack that
        # keeps failing gets its own protection LP, and after some rounds the complements
        # chosen stay (the choice could otherwise swap the same cells in and out: measured
        # on modular's outsider pattern of the generated 13,851-cell three-way table, one
        # target failed in round after round)
        stubborn = Stubborn(AUDIT_STUBBORN_FAILS, relax=RELAX_FIRST)
        for inner in range(max_rounds):
            if time.monotonic() > deadline:
                raise out_of_time()
            try:
                expected = {key for key in keys if inner == 0 or not latest[key].ok} if RELAX_FIRST else None
                atts = _attacks(problem, bounds, w, keys, deadline, relax=expected)
            except OutOfTime as exc:
                latest.update(exc.attacks or {})  # what the round settled before its deadline
                raise out_of_time() from None
            latest.update(atts)
            bad = failing(bounds, atts)
            if not bad:
                if inner == 0:
                    # the audit and the attacker LP disagree within their tolerances: one
                    # more complement next to each such target settles it
                    widen(problem, w, cand, sorted({key[0] for key in keys}))
                break
            if inner >= JOINT_ROUNDS:
                choice.freeze(w)
            try:
                w = revise(problem, bounds, choice, w, atts, bad, cand, deadline)
                w = stubborn.protect(problem, bounds, choice, w, bad, cand, deadline)
            except OutOfTime:
                raise out_of_time() from None
            ever.update(bad)
            # attacked again: those whose last table no longer stands (a complement it
            # moved was given up by the revision, or the attack failed)
            keys = [key for key in sorted(ever) if not still_holds(bounds, latest[key], w)]
        else:
            break
        again = np.zeros(problem.n, dtype=bool)
        again[[key[0] for key in keys_named]] = True
        recheck = (again, w & ~before)
        # the repair only adds cells, so the audit's tables stay feasible
        seeds = None if (before & ~w).any() else {**(given or {}), **result.tables}
    raise AuditFailure(f"the repair guided by the audit did not converge in {max_rounds} rounds; "
                       "the pattern is not published")

