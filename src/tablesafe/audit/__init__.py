"""Disclosure audit: prove what an attacker can and cannot recalculate.

Public functions:

- :func:`feasibility_intervals` — attacker bounds of withheld cells (criterion 1).
- :func:`audit` — verdict per sensitive cell plus insider checks -> :class:`AuditResult`;
  :func:`verdict_line`, :func:`findings_in_words`, :func:`all_protected` say what it found.
- :func:`make_certificates`, :func:`check_certificates` — protection certificates.
- :func:`insider_findings`, :func:`sensitive_unions` — insider attacks.
- :func:`most_sensitive_aggregation`, :func:`criterion2` — the most sensitive
  aggregation (the mixed-integer programme of Daalmans and de Waal, *An Improved
  Formulation of the Disclosure Auditing Problem for Secondary Cell Suppression*).
"""

from tablesafe.audit.aggregation import (
    AggregationResult,
    criterion2,
    explicit_aggregations,
    most_sensitive_aggregation,
)
from tablesafe.audit.audit import audit
from tablesafe.audit.certificates import CertificateFailure, check_certificates, make_certificates
from tablesafe.audit.insider import insider_findings, sensitive_unions
from tablesafe.audit.intervals import IntervalResult, feasibility_intervals, solve_intervals
from tablesafe.audit.result import (
    REL_TOL,
    AuditResult,
    all_protected,
    findings_in_words,
    verdict_line,
    verdicts,
)

__all__ = [
    "REL_TOL",
    "AggregationResult",
    "AuditResult",
    "CertificateFailure",
    "IntervalResult",
    "all_protected",
    "audit",
    "check_certificates",
    "criterion2",
    "explicit_aggregations",
    "feasibility_intervals",
    "findings_in_words",
    "insider_findings",
    "make_certificates",
    "most_sensitive_aggregation",
    "sensitive_unions",
    "solve_intervals",
    "verdict_line",
    "verdicts",
]
