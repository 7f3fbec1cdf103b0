"""The report lists every option of the run: each parameter of ``tablesafe.protect`` (the
options the command line and job files share), the method ``auto`` chose and why, and the
time limit given or chosen."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pandas as pd
import pytest

import tablesafe
from tablesafe.report import render_report

NOT_AN_OPTION = {"progress"}
"""Parameters of ``protect`` that do not change the result (shown progress only)."""


def _microdata() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for region in ("N", "S", "E"):
        for size in ("1", "2", "3"):
            for _ in range(4):
                rows.append((region, size, float(rng.integers(10, 100))))
    rows.append(("N", "1", 400.0))  # one dominant unit: N x 1 is sensitive under p(15)
    return pd.DataFrame(rows, columns=["region", "size", "turnover"])


def _parameter_rows(html: str) -> dict[str, str]:
    section = html.split('id="parameters"', 1)[1].split("</section>", 1)[0]
    return dict(re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", section))


@pytest.fixture(scope="module")
def auto_report() -> dict[str, str]:
    result = tablesafe.protect(_microdata(), ["region", "size"], "turnover", "p(15)", method="auto",
                               singleton=False, capacity=True, sliding=True, insider="warn")
    return _parameter_rows(render_report(result))


def test_every_option_of_protect_is_in_the_report(auto_report):
    options = [n for n in inspect.signature(tablesafe.protect).parameters if n not in NOT_AN_OPTION]
    missing = [n for n in options if n not in auto_report]
    assert not missing, f"options of tablesafe.protect missing from the report's parameters: {missing}"


def test_newer_options_show_their_values(auto_report):
    assert auto_report["singleton"] == "False" and auto_report["capacity"] == "True"
    assert auto_report["sliding"] == "True" and auto_report["insider"] == "warn"
    assert auto_report["rules"] == "p(15)"
    assert auto_report["holding"] == "—"  # not given


def test_auto_method_and_chosen_time_limit_are_explained(auto_report):
    assert auto_report["method"].startswith("auto: ") and "(" in auto_report["method"]
    assert auto_report["time_limit"].endswith("s (chosen from the table size)")


def test_a_given_time_limit_is_shown_as_given():
    result = tablesafe.protect(_microdata(), ["region", "size"], "turnover", "p(15)", method="modular",
                               time_limit=45)
    rows = _parameter_rows(render_report(result))
    assert rows["method"] == "modular" and rows["time_limit"] == "45 s (given)"


def _step_rows(html: str) -> dict[str, str]:
    if 'id="suppression-steps"' not in html:
        return {}
    section = html.split('id="suppression-steps"', 1)[1].split("</section>", 1)[0]
    return dict(re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", section))


def test_the_report_says_how_the_pattern_was_built():
    """A ``modular`` run lists its subtables, the full-table repair with the cells and
    value it added (what tau-ARGUS's Modular leaves out) and the cleanup, with the
    figures of the run's own stats; ``fast`` has no subtables to list."""
    from tablesafe.synthetic import synthetic_problem

    result = tablesafe.protect_problem(synthetic_problem("1k", seed=4), method="modular")
    steps = _step_rows(render_report(result))
    st = result.pattern.stats
    assert st["subtables_solved"] > 0 and result.pattern.withheld.any()
    assert steps["subtables"].startswith(f"{st['subtables']:,} subtables, ")
    assert f" {st['subtables_solved']:,} solve" in steps["subtables"] and "by cuts" in steps["subtables"]
    cells = f"{st['repair_added']:,} cell{'' if st['repair_added'] == 1 else 's'}"
    assert steps["full-table repair"].startswith(f"added {cells} worth {st['repair_added_value']:,.2f}")
    assert steps["cleanup"].startswith(f"gave back {st['cleanup_removed']:,} cell")
    fast = tablesafe.protect_problem(synthetic_problem("1k", seed=4), method="fast")
    fast_steps = _step_rows(render_report(fast))
    assert "subtables" not in fast_steps
    # the cells only single respondents' insider certificates brought in, and their value
    fst = fast.pattern.stats
    assert fst["insider_added"] > 0
    added = f"{fst['insider_added']:,} cell{'' if fst['insider_added'] == 1 else 's'}"
    assert fast_steps["insider certificates"].startswith(f"{added} worth {fst['insider_added_value']:,.2f}")


def test_the_report_names_the_steps_the_clock_ended(monkeypatch):
    """A run whose search the clock (not its bound on LP work) ended says, in the report,
    that another run may give another pattern; a run bounded by work says nothing."""
    import time

    from tablesafe.audit import lp as lpmod
    from tablesafe.synthetic import synthetic_problem

    problem = synthetic_problem("1k", seed=4)
    calm = tablesafe.protect_problem(problem, method="modular", time_limit=60)
    assert calm.pattern.stats["clock_decided"] == []
    assert "ended by the clock" not in _step_rows(render_report(calm))
    assert "ended by the clock" not in calm.summary()
    real_run = lpmod._MeteredHighs.run

    def slow_run(self):
        time.sleep(0.005)
        return real_run(self)

    monkeypatch.setattr(lpmod._MeteredHighs, "run", slow_run)
    hurried = tablesafe.protect_problem(problem, method="optimal", time_limit=3)
    steps = _step_rows(render_report(hurried))
    assert hurried.pattern.stats["clock_decided"]
    assert "another run" in steps["ended by the clock"]
    assert "ended by the clock: " + hurried.pattern.stats["clock_decided"][0] in hurried.summary()


def test_the_report_says_when_the_repair_was_left_to_the_certificates(monkeypatch):
    """A three-way table whose attacker-LP repair is estimated past its share of the
    limit: the report names the estimate and the certificates that completed the pattern."""
    import tablesafe.suppress.repair_estimate as estimate
    from tablesafe.synthetic import synthetic_problem

    monkeypatch.setattr(estimate, "LP_REPAIR_SECONDS_PER_UNIT", 60.0)
    result = tablesafe.protect_problem(synthetic_problem("1k3d", seed=4), method="modular", time_limit=60)
    steps = _step_rows(render_report(result))
    assert steps["repair skipped"].startswith("attacker-LP repair estimated at ")
    assert "local certificates complete the pattern" in steps["repair skipped"]
    assert "certificates completing the pattern" in steps and "full-table repair" not in steps


def test_the_report_says_when_optimal_left_the_primaries_to_the_certificates(monkeypatch):
    """``optimal`` on a table whose pattern the certificates complete, with a ``fast`` start
    that gives up: the report's steps say the search was skipped and what completed it."""
    import tablesafe.suppress.dispatch as dispatch
    import tablesafe.suppress.optimal as opt
    from tablesafe.synthetic import synthetic_problem

    real_start = opt._heuristic_start
    monkeypatch.setattr(opt, "_heuristic_start",
                        lambda p, b, s=None, clock=None, **k: real_start(p, b, 0.0, clock, **k))
    monkeypatch.setattr(dispatch, "LP_REPAIR_MAX_CELLS", 10)
    result = tablesafe.protect_problem(synthetic_problem("1k", seed=2), method="optimal", time_limit=60)
    steps = _step_rows(render_report(result))
    assert steps["search skipped"].startswith("the fast start gave up")
    assert "certificates completing the pattern" in steps
