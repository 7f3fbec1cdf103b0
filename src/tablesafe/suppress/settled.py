"""Targets a repair already proved before it ran out of time, as certificates.

A repair that stops at its deadline has attacked many targets on the way, and most of
their attacks passed: each passing attack holds a feasible table of the whole table that
moves its target far enough, differs from the truth only in cells withheld then, and
stays feasible while those cells stay withheld (:func:`~tablesafe.suppress.protection.still_holds`).
The completion that takes over (local certificates, :func:`tablesafe.suppress.fast.fast_pattern`)
need not search again for those targets: their tables are their certificates, and it
searches only for the rest. Before, it searched for every target in the little time
left, which on the generated 13,167-cell two-way table at 10 s meant certificates
without an LP (boxes) for all 3,565 targets: 66.8 M of secondaries against 5.4 M when the
repair ends.

What counts as settled is decided by the certificate check itself
(:func:`tablesafe.audit.check_certificates` with the single respondents), on the pattern
the completion starts from: a target is settled when its tables prove both directions
against the outsider and against every single respondent; any other target is searched
again from scratch.

The audit-guided repair (:mod:`tablesafe.suppress.audit_repair`) proves most targets by
its audit, which keeps no table per target. A target its last audit that ended named no
failing attack on stays protected under the larger pattern the repair got to
(:class:`Audited`); it gets no certificate, and the completed pattern is audited once
more for what changed (:func:`tablesafe.suppress.repairs.audit_after_completion`). On
the generated 61,215-cell two-way table at 90 s that left 612 of 22,255 targets to the
completion.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import UP, Bounds
from tablesafe.suppress.local.certificates import CertificateLog, Certificates, certificate_frame
from tablesafe.suppress.proof import with_true_offsets
from tablesafe.suppress.protection import still_holds

__all__ = ["Audited", "Settled", "settled_targets"]


@dataclass(frozen=True)
class Audited:
    """What the last audit of an audit-guided repair that ended proved: every target it
    named no failing attack on is protected under ``pattern``, and so under every pattern
    that contains it (withholding more cells only widens what each attacker, outsider or
    single respondent, cannot exclude).

    Attributes:
        pattern: the pattern that audit saw.
        named: mask of the targets it named a failing attack on.
        tables: its feasible tables (with those it was seeded with): seeds of a later
            audit of a pattern that contains ``pattern``.
        seconds: how long it took.
    """

    pattern: np.ndarray
    named: np.ndarray
    tables: dict
    seconds: float = 0.0


@dataclass(frozen=True)
class Settled:
    """Targets proved already: by certificates (``insider`` indexes ``labels``/``held``),
    or by an audit of a smaller pattern (``audit``; such targets carry no certificate, so
    the finished pattern needs a further audit of what changed since, see
    :func:`tablesafe.suppress.repairs.audit_after_completion`).

    Attributes:
        targets: the targets settled by certificates (ascending cell positions).
        certs: their certificates, one row per (target, direction, insider, moved cell).
        labels: per insider certificate, the names of the cell it keeps fixed.
        held: per insider certificate, that cell.
        audit: the earlier audit, when it settles targets.
        audited: the targets it settles (ascending; none without ``audit``).
    """

    targets: np.ndarray
    certs: Certificates
    labels: list[str]
    held: list[np.ndarray]
    audit: Audited | None = None
    audited: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def cells(self) -> np.ndarray:
        """The cells the certificates move (ascending)."""
        return np.unique(self.certs.cell)

    @property
    def skipped(self) -> np.ndarray:
        """Every settled target, by certificates or by the audit (ascending)."""
        return np.union1d(self.targets, self.audited)


def settled_targets(problem: Problem, bounds: Bounds, attacks: dict, withheld: np.ndarray,
                    singleton: bool = True, audited: Audited | None = None) -> Settled | None:
    """The targets whose passing ``attacks`` (:class:`~tablesafe.suppress.attacker.Attack`
    by (target, direction, insider)) prove them under ``withheld``, with those attacks'
    tables as certificates (each scaled to move its target by exactly its level), and,
    with ``audited`` (an audit of a pattern ``withheld`` contains), the sensitive cells it
    named no failing attack on; None when there is none. Attacks whose tables move a cell
    not in ``withheld``, unbounded attacks (no table) and failed ones are left out."""
    if audited is not None and (audited.pattern & ~withheld).any():
        audited = None  # (not a pattern this one contains: it proves nothing here)
    by_audit = (np.zeros(0, dtype=np.int64) if audited is None
                else np.flatnonzero(problem.sensitive & ~audited.named))
    if audited is not None:
        attacks = {key: a for key, a in attacks.items() if audited.named[key[0]]}
    log = _certificate_log(problem, bounds, attacks, withheld)
    certs = log.flat()
    proved = (_proved(problem, withheld, certs, log.labels, singleton) if len(certs.target)
              else np.zeros(0, dtype=np.int64))
    if not len(proved) and not len(by_audit):
        return None
    keep = np.isin(certs.target, proved)
    used = np.unique(certs.insider[keep & (certs.insider >= 0)])
    renumber = np.full(len(log.labels) + 1, -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    insider = np.where(certs.insider[keep] >= 0, renumber[certs.insider[keep]], -1)
    kept = Certificates(certs.target[keep], certs.direction[keep], certs.cell[keep], certs.dev[keep], insider)
    return Settled(targets=proved, certs=kept, labels=[log.labels[i] for i in used.tolist()],
                   held=[log.held[i] for i in used.tolist()], audit=audited if len(by_audit) else None,
                   audited=by_audit)


def _certificate_log(problem: Problem, bounds: Bounds, attacks: dict, withheld: np.ndarray) -> CertificateLog:
    """The tables of the passing attacks that stand under ``withheld``, as certificates
    (direction 0 up, 1 down; insider attacks labelled by the cell they keep fixed)."""
    log = CertificateLog()
    for (target, direction, insider), a in sorted(attacks.items()):
        if not still_holds(bounds, a, withheld):
            continue
        moved = abs(float(a.dev[a.cells == target].sum()))  # 0 for a table that moves nothing
        if moved <= 0:
            continue
        dev = a.dev * min(1.0, a.required / moved) if a.required > 0 else a.dev
        nz = np.abs(dev) > 0
        label = -1 if insider < 0 else log.label(np.array([insider], dtype=np.int64), problem.names)
        log.add(int(target), [(0 if direction == UP else 1, a.cells[nz].astype(np.int64), dev[nz].astype(float))],
                label)
    return log


def _proved(problem: Problem, withheld: np.ndarray, certs: Certificates, labels: list[str],
            singleton: bool) -> np.ndarray:
    """The targets of ``certs`` that the certificate check finds nothing wrong with: every
    needed direction proved, for the outsider and (``singleton``) every single respondent."""
    from tablesafe.audit import check_certificates

    frame = certificate_frame(problem, certs, labels)
    failures = check_certificates(with_true_offsets(problem), withheld, frame,
                                  insiders=True if singleton else None)
    index = pd.Index(problem.names.astype(str))
    wrong = index.get_indexer(pd.unique(np.array([f.target for f in failures], dtype=str)))
    return np.setdiff1d(np.unique(certs.target), wrong[wrong >= 0])
