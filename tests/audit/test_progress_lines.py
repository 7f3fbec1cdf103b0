"""An audit reports its progress while it runs, counted in forked workers too: every
bound of criterion 1 and every target screened against its single respondents by the
last line, and the same verdicts and findings as an audit without a report."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tablesafe import live_counts
from tablesafe.audit import audit, singletons
from tablesafe.synthetic import problem_from_data, synthetic_data

_BOUNDS = re.compile(r"^audit: ([\d,]+) of ([\d,]+) bounds settled")
_INSIDERS = re.compile(r"single respondents: ([\d,]+) of ([\d,]+) targets screened, ([\d,]+) suspects checked")


def _int(s: str) -> int:
    return int(s.replace(",", ""))


@pytest.mark.parametrize("parallel", [False, True])
def test_the_last_line_counts_every_bound_and_target(parallel, monkeypatch):
    syn = synthetic_data([[3, 3], [4, 2]], 80, seed=3)
    p = problem_from_data(syn, p=15, use_holdings=True)
    withheld = p.sensitive | (np.random.default_rng(0).random(p.n) < 0.3)
    monkeypatch.setattr(live_counts, "REPORT_EVERY", 0.001)
    monkeypatch.setattr(singletons, "PART_TARGETS", 3)
    monkeypatch.setattr(singletons, "PARALLEL_MIN_TARGETS", 1 if parallel else 10**9)
    lines: list[str] = []
    said = audit(p, withheld, insider=True, progress=lines.append)
    quiet = audit(p, withheld, insider=True)
    assert list(said.verdict) == list(quiet.verdict)
    f, g = said.insider_findings, quiet.insider_findings
    assert set(zip(f["target"], f["attacker"], f["verdict"])) == set(zip(g["target"], g["attacker"], g["verdict"]))
    assert lines and all(_BOUNDS.match(line) for line in lines)
    done, total = (_int(x) for x in _BOUNDS.match(lines[-1]).groups())
    # two bounds per withheld sensitive cell in a relation with another withheld cell
    assert total == done > 0
    assert total <= 2 * int((withheld & p.sensitive).sum())
    m = _INSIDERS.search(lines[-1])
    assert m is not None
    assert _int(m[1]) == _int(m[2]) > 0
    seen = [_int(_BOUNDS.match(line)[1]) for line in lines]
    assert seen == sorted(seen)


def test_no_report_without_progress():
    syn = synthetic_data([[3, 2], [3]], 60, seed=4)
    p = problem_from_data(syn, p=15, use_holdings=True)
    audit(p, p.sensitive, insider=True)
    assert not live_counts.active()
