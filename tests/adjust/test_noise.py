"""Noise added to the microdata (seed 003 B.4, Example 1)."""

from __future__ import annotations

import numpy as np
import pytest

from tablesafe.adjust.noise import noise_multipliers, noise_protects, noisy_values
from tablesafe.errors import InputError

# seed 003 B.4 Example 1: company A with establishments A1-A4, B with B1-B2, C with C1;
# 10 % noise; the seed's multipliers lie within 1.08-1.12 and 0.89-0.93
EXAMPLE_COMPANIES = np.array(["A", "A", "A", "A", "B", "B", "C"])


def test_seed003_example1_establishments_of_a_company_move_alike_near_one_plus_or_minus_ten_percent():
    for seed in range(50):
        mult, direction = noise_multipliers(EXAMPLE_COMPANIES, 10, seed=seed)
        for company in "ABC":
            mine = EXAMPLE_COMPANIES == company
            assert len(set(direction[mine])) == 1  # one direction per company
            side = direction[mine][0]
            assert np.all(np.sign(mult[mine] - 1) == side)
            # within 1 +- 10 % * (1 +- 0.3), as the seed's 1.08-1.12 and 0.89-0.93
            assert np.all(np.abs(np.abs(mult[mine] - 1) - 0.10) <= 0.03 + 1e-12)


def test_seed003_example1_the_joint_distribution_is_symmetric_about_one():
    """Directions up and down equally likely, the two halves mirror images, mean 1: the
    expected noise in a cell is 0."""
    companies = np.repeat(np.arange(4000), 3)
    mult, direction = noise_multipliers(companies, 10, seed=7)
    up, down = mult[direction > 0] - 1, 1 - mult[direction < 0]
    assert abs((direction > 0).mean() - 0.5) < 0.02
    assert abs(mult.mean() - 1) < 0.005
    qs = np.linspace(0.05, 0.95, 10)
    assert np.allclose(np.quantile(up, qs), np.quantile(down, qs), atol=0.002)
    assert np.allclose(np.median(up), 0.10, atol=0.003)


def test_noise_is_seeded_and_its_cells_add_up():
    values = np.arange(1.0, 8.0)
    a = noisy_values(values, EXAMPLE_COMPANIES, 10, seed=3)
    assert np.array_equal(a, noisy_values(values, EXAMPLE_COMPANIES, 10, seed=3))
    assert not np.array_equal(a, noisy_values(values, EXAMPLE_COMPANIES, 10, seed=4))
    # a cell tabulated from the noisy records is the sum of their noisy values
    assert np.isclose(a[:4].sum() + a[4:6].sum(), a[:6].sum())


def test_a_sensitive_cell_is_protected_when_its_noise_reaches_its_level():
    true = np.array([100.0, 100.0, 100.0, 50.0])
    noisy = np.array([112.0, 95.0, 89.0, 50.0])
    ok = noise_protects(true, noisy, upl=np.full(4, 10.0), lpl=np.full(4, 10.0),
                        sensitive=np.array([True, True, True, False]))
    assert ok.tolist() == [True, False, True, True]


@pytest.mark.parametrize("percent", [0, -5, 100])
def test_a_bad_percentage_is_refused(percent):
    with pytest.raises(InputError, match="noise percentage"):
        noise_multipliers(EXAMPLE_COMPANIES, percent)
