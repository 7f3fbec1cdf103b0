"""Progress of long checks: the repair's check reports the attacks it has settled while it
runs, counted across forked workers, without changing what it finds; the cleanup
reports the complements it has tried."""

from __future__ import annotations

import re

import numpy as np
import pytest
from _suppress_gen import random_complements

from tablesafe import live_counts
from tablesafe.suppress import attack_parts
from tablesafe.suppress.cleanup import cleanup
from tablesafe.suppress.protection import _attack_all, outsider_keys, repair

_LINE = re.compile(r"^(?P<label>[^:]+): (?P<out>[\d,]+) of (?P<total>[\d,]+) outsider attacks, "
                   r"(?P<ins>[\d,]+) insider attacks settled, \d+ s")


def _pattern(seed: int):
    return random_complements(seed)


def _numbers(line: str) -> tuple[str, int, int, int]:
    m = _LINE.match(line)
    assert m, line
    return (m["label"], int(m["out"].replace(",", "")), int(m["total"].replace(",", "")),
            int(m["ins"].replace(",", "")))


@pytest.mark.parametrize("cpus", [1, 2])
def test_the_check_counts_every_outsider_attack_in_workers_too(cpus, monkeypatch):
    p, b, w = _pattern(11)
    targets = np.flatnonzero(p.sensitive)
    monkeypatch.setattr(attack_parts, "PARALLEL_MIN_TARGETS", 1)
    monkeypatch.setattr(attack_parts, "MOST_IN_ONE_PART", 1.0)
    monkeypatch.setattr(attack_parts, "worker_count", lambda most=2: cpus)
    monkeypatch.setattr(live_counts, "REPORT_EVERY", 0.001)
    assert len(attack_parts.block_parts(p, w, targets)) == 2
    lines: list[str] = []
    said = _attack_all(p, b, w, targets, progress=lines.append, label="check")
    quiet = _attack_all(p, b, w, targets)
    assert sorted(said) == sorted(quiet)
    for key in said:
        assert (said[key].reached, said[key].ok) == (quiet[key].reached, quiet[key].ok)
    assert lines
    counts = [_numbers(line) for line in lines]
    total = len(outsider_keys(b, targets))
    assert all(label == "check" and t == total for label, _, t, _ in counts)
    outs = [o for _, o, _, _ in counts]
    assert outs == sorted(outs)  # counts only grow
    # the last line, written when the check ends: every outsider attack, whichever process ran it
    assert outs[-1] == total
    assert counts[-1][3] <= sum(1 for key in said if key[2] >= 0)


def test_no_log_no_report_and_nothing_counted():
    p, b, w = _pattern(12)
    assert not live_counts.active()
    _attack_all(p, b, w, np.flatnonzero(p.sensitive))
    assert not live_counts.active()


def test_repair_reports_its_check_and_rounds(monkeypatch):
    p, b, _ = _pattern(12)
    monkeypatch.setattr(live_counts, "REPORT_EVERY", 0.001)
    lines: list[str] = []
    out, _, _ = repair(p, b, p.sensitive.copy(), progress=lines.append)
    checks = [line for line in lines if line.startswith("repair check:")]
    assert checks and _numbers(checks[-1])[1] == _numbers(checks[-1])[2]
    assert any(line.startswith("repair round 0:") for line in lines)
    same, _, _ = repair(p, b, p.sensitive.copy())
    assert np.array_equal(out, same)


def test_cleanup_reports_complements_tried(monkeypatch):
    p, b, w = _pattern(11)
    out, atts, _ = repair(p, b, w)
    monkeypatch.setattr(live_counts, "REPORT_EVERY", 0.001)
    lines: list[str] = []
    said, _, removed = cleanup(p, b, out, atts, progress=lines.append)
    quiet, _, removed2 = cleanup(p, b, out, atts)
    assert np.array_equal(said, quiet) and removed == removed2
    tried = [re.match(r"cleanup: ([\d,]+) of ([\d,]+) complements tried, ([\d,]+) published again", line)
             for line in lines]
    assert tried and all(tried)
    n = int((out & ~p.sensitive).sum())
    assert all(int(m[2].replace(",", "")) == n for m in tried if m)
    assert [int(m[1].replace(",", "")) for m in tried if m] == sorted(int(m[1].replace(",", "")) for m in tried if m)
