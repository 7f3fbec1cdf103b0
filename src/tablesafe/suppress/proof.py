"""How a pattern is proved before it is returned: the independent LP audit, or the
method's certificates checked in one pass."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.errors import AuditFailure
from tablesafe.problem import Problem

AUDIT_STAT = {"certificates": "certificates", "audit": "lp", "": "none"}
"""``stats["audit"]`` for each proof of a pattern (``Pattern.proof``)."""


def final_audit(problem: Problem, withheld: np.ndarray, log=None):
    """The independent audit (:func:`tablesafe.audit.audit`, criterion 1, the attacker's
    own a priori bounds, no capacity) must pass; otherwise nothing is returned.

    Singleton protection was enforced by the repair's attacks (``bounds``); the audit here
    is the separate, plain check every published pattern has to pass.
    """
    from tablesafe.audit import audit as run_audit

    result = run_audit(with_true_offsets(problem), withheld, insider=False, progress=log or False)
    if not result.ok:
        bad = np.flatnonzero(np.isin(result.verdict, ("exact", "upper", "lower", "sliding")))
        names = ", ".join(repr(problem.names[k]) for k in bad[:10])
        raise AuditFailure(
            f"the final audit found {len(bad)} under-protected sensitive cell(s) ({names}); "
            "the pattern is not published"
        )
    return result


def proven_by_certificates(problem: Problem, withheld: np.ndarray, certs, stats: dict, singleton: bool):
    """Check a method's certificates in one pass; drop complements none of them moves.

    Returns ``(proven, withheld, gaps)``: ``proven`` when every sensitive cell has valid
    certificates against the outsider; ``gaps`` are the targets for which some single
    respondent (``singleton``) has no certificate that keeps its own cell fixed. A
    complement that no certificate moves can be published again: every certificate stays
    a feasible table (seed 003 B.2.b second pass).
    """
    from tablesafe.audit import check_certificates
    from tablesafe.audit.certificates import INSIDER_GAP

    failures = check_certificates(with_true_offsets(problem), withheld, certs,
                                  insiders=True if singleton else None)
    insider = [f for f in failures if f.reason.startswith(INSIDER_GAP)]
    stats["certificate_failures"] = len(failures) - len(insider)
    stats["insider_certificate_gaps"] = len(insider)
    if len(failures) > len(insider):
        return False, withheld, np.zeros(0, dtype=np.int64)
    # (pandas' hash lookup: numpy's isin on string arrays takes seconds on 10^4 cells)
    index = pd.Index(problem.names.astype(str))
    used = index.isin(pd.unique(certs["cell"].astype(str).to_numpy()))
    keep = problem.sensitive | (withheld & used)
    stats["cleanup_removed"] = int((withheld & ~keep).sum())
    gaps = np.unique(index.get_indexer(pd.unique(np.array([f.target for f in insider], dtype=str))))
    return True, keep, gaps.astype(np.int64)


def with_true_offsets(problem: Problem) -> Problem:
    """The problem with the relations as they hold for the true values.

    The attacks work on deviations from the truth, so a table rounded after aggregation
    keeps its offsets as right-hand sides; the audit and certificate checks must agree.
    """
    residual = problem.relations @ problem.value
    return problem if np.allclose(residual, problem.rhs) else problem.copy(rhs=residual)
