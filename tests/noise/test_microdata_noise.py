"""Noise added to the microdata (issue 14; seed 003 B.4): one direction per company,
multipliers symmetric about 1, cells published when their noise protects them, the
others withheld so that the published noisy table cannot bring them within their levels
of the true value (checked by an independent LP)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

import tablesafe
from tablesafe.errors import InputError
from tablesafe.noise import NoiseOptions, multipliers, noised_problem
from tablesafe.synthetic import synthetic_data


def test_a_company_keeps_its_direction_whatever_the_order_of_the_records():
    """The multipliers themselves (one direction per company, mirror-image halves, seed 003
    B.4 Example 1) are tested in tests/adjust/test_noise.py; here: the direction of a
    company does not depend on where its records stand, and the seed matters."""
    companies = np.repeat(np.arange(2_000), 3)
    opts = NoiseOptions.build(10, 3, seed=1)
    m = multipliers(companies, opts)
    assert np.array_equal(m, multipliers(companies, opts))
    assert not np.array_equal(m, multipliers(companies, NoiseOptions.build(10, 3, seed=2)))
    assert np.all((np.abs(m - 1) >= 0.07 - 1e-12) & (np.abs(m - 1) <= 0.13 + 1e-12))
    perm = np.random.default_rng(0).permutation(len(companies))
    assert np.array_equal(np.sign(multipliers(companies[perm], opts) - 1), np.sign(m - 1)[perm])


@pytest.fixture(scope="module")
def noisy():
    syn = synthetic_data([[3, 4], [2, 5]], 1_500, seed=5, holding_cohesion=0.7)
    res = tablesafe.protect(syn.data, list(syn.hierarchies.items()), syn.response, "p(15)", holding=syn.holding,
                            method="noise", noise_percent=10, seed=3)
    return syn, res


def test_noisy_values_add_up_and_come_from_the_noisy_records(noisy):
    _, res = noisy
    p = res.problem
    assert np.abs(p.residual()).max() <= 1e-6 * np.abs(p.value).max()
    grand = int(np.argmax(np.asarray(res.noise.true)))
    ratio = res.noise.noisy[grand] / res.noise.true[grand]
    assert 0.87 < ratio < 1.13 and ratio != 1.0


def test_published_sensitive_cells_are_moved_by_their_levels(noisy):
    syn, res = noisy
    n = res.noise
    # protected by their noise: no longer primaries (at most complements of others)
    assert n.by_noise.any() and set(res.status[n.by_noise]) <= {"S", "M"}
    truth, _, _ = tablesafe.prepare_problem(syn.data, list(syn.hierarchies.items()), syn.response, "p(15)",
                                            holding=syn.holding)
    e = n.noisy - n.true
    k = np.flatnonzero(n.by_noise)
    assert np.all((e[k] >= truth.upl[k] - 1e-6) | (-e[k] >= truth.lpl[k] - 1e-6))
    # every sensitive cell is either protected by its noise or withheld
    assert np.all(n.by_noise | res.withheld | ~truth.sensitive)


def test_withheld_cells_keep_their_levels_around_the_true_value(noisy):
    """Independent LP (scipy) on the noisy table: each withheld sensitive cell can still take
    values at least its levels above and below its true value."""
    syn, res = noisy
    truth, _, _ = tablesafe.prepare_problem(syn.data, list(syn.hierarchies.items()), syn.response, "p(15)",
                                            holding=syn.holding)
    p = res.problem
    w = res.withheld
    wi = np.flatnonzero(w)
    a = p.relations.toarray()
    rhs = -a[:, ~w] @ p.value[~w]
    keep = np.abs(a[:, wi]).sum(axis=1) > 0
    for i in np.flatnonzero(w & truth.sensitive & ~res.noise.by_noise)[:12]:
        k = int(np.searchsorted(wi, i))
        c = np.zeros(len(wi))
        out = []
        for sense in (1.0, -1.0):
            c[k] = sense
            r = linprog(c, A_eq=a[keep][:, wi], b_eq=rhs[keep], bounds=[(0, None)] * len(wi), method="highs")
            out.append(r.x[k] if r.status == 0 else -sense * np.inf)
        lo, hi = out
        t = res.noise.true[i]
        assert hi >= t + truth.upl[i] - 1e-6 and lo <= t - min(truth.lpl[i], t) + 1e-6


def test_outputs_and_measures(noisy, tmp_path):
    syn, res = noisy
    pub = res.publication
    shown = pd.to_numeric(pub[syn.response], errors="coerce")
    assert shown.notna().sum() == int((~res.withheld).sum())
    cells = res.cells
    assert {"true_value", "noise", "protected_by_noise"} <= set(cells.columns)
    st = res.noise.stats
    # noise of opposite directions partly cancels in cells of several companies
    assert 0 < st["published_share"] <= 1 and 0.005 < st["mean_relative_error"] < 0.13
    assert "noise added to the microdata" in res.summary()
    from tablesafe.report import render_report

    html = render_report(res)
    assert 'id="noise"' in html


def test_noise_needs_microdata_and_sane_options(noisy):
    _, res = noisy
    with pytest.raises(InputError, match="noise_percent"):
        NoiseOptions.build(0)
    with pytest.raises(InputError, match="noise_spread"):
        NoiseOptions.build(10, 12)
    with pytest.raises(InputError, match="microdata"):
        tablesafe.protect_problem(res.problem, method="noise")


def test_noised_problem_levels_are_measured_from_the_true_value():
    p = tablesafe.Problem.from_arrays([100.0, 60.0, 40.0], [[-1, 1, 1]], status=["S", "U", "S"],
                                      upl=[0, 10, 0], lpl=[0, 10, 0])
    noisy = np.array([104.0, 64.0, 40.0])  # the sensitive cell moved up 4 of its 10
    q, by = noised_problem(p, noisy)
    assert not by.any()
    assert q.upl[1] == pytest.approx(6) and q.lpl[1] == pytest.approx(14)
    q2, by2 = noised_problem(p, np.array([112.0, 72.0, 40.0]))  # moved 12 >= 10: protected
    assert by2[1] and q2.status[1] == "S"


def test_noise_refuses_files_it_cannot_read(tmp_path):
    from tablesafe.noise import noisy_data

    asc = tmp_path / "micro.asc"
    asc.write_text("1 2 3\n")
    with pytest.raises(InputError, match="tau-ARGUS microdata needs its metadata"):
        noisy_data(str(asc), "x", None, NoiseOptions.build(10))
