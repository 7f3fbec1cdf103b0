"""Noise added to the microdata before tabulation (seed 003 B.4; Evans 1998).

Each company (holding) gets a direction, up or down with probability 1/2; each of its
establishments (records) a multiplier near ``1 + m`` or ``1 - m`` from the half of one
symmetric distribution that lies on the company's side::

    multiplier = 1 + direction * m * (1 + spread * T),   T triangular on [-1, 1]

so the multipliers of the two directions are mirror images about 1, their joint
distribution is symmetric with mean 1, a company's establishments all move the same way
and average about ``1 +- m``, and the expected noise in any cell is 0. The percentage
``m`` and the seed are confidential. Tables tabulated from the noisy values are additive
(sums of noisy records); a sensitive cell is protected when its noise reaches its
protection level in the direction it moved (:func:`noise_protects`).
"""

from __future__ import annotations

import numpy as np

from tablesafe.errors import InputError

SPREAD = 0.3
"""Half-width of a multiplier's distribution around ``1 +- m``, relative to ``m`` (seed 003
Example 1: 10 % noise, multipliers 1.08 to 1.12 and 0.89 to 0.93)."""


def noise_multipliers(companies: np.ndarray, percent: float, *, seed: int = 0,
                      spread: float = SPREAD) -> tuple[np.ndarray, np.ndarray]:
    """One multiplier per record and one direction per company.

    Args:
        companies: the company (holding) of each record; records of one company move alike.
        percent: the noise ``m`` in percent (e.g. 10 for multipliers near 1.1 and 0.9).
        seed: seed of the generator (same seed and data, same multipliers).
        spread: see :data:`SPREAD`.

    Returns:
        ``(multipliers per record, direction per record (+1 or -1))``.

    Raises:
        InputError: a percentage outside (0, 100) or a spread outside [0, 1).
    """
    if not 0 < percent < 100:
        raise InputError(f"the noise percentage must lie between 0 and 100, not {percent!r}")
    if not 0 <= spread < 1:
        raise InputError(f"the spread of the multipliers must lie in [0, 1), not {spread!r}")
    m = percent / 100.0
    rng = np.random.default_rng(seed)
    codes, company = np.unique(np.asarray(companies), return_inverse=True)
    direction = np.where(rng.random(len(codes)) < 0.5, 1, -1)[company]
    t = rng.triangular(-1.0, 0.0, 1.0, size=len(company))
    return 1.0 + direction * m * (1.0 + spread * t), direction


def noisy_values(values: np.ndarray, companies: np.ndarray, percent: float, *, seed: int = 0) -> np.ndarray:
    """``values`` (one per record) times their multipliers (:func:`noise_multipliers`)."""
    multipliers, _ = noise_multipliers(companies, percent, seed=seed)
    return np.asarray(values, dtype=float) * multipliers


def noise_protects(true: np.ndarray, noisy: np.ndarray, upl: np.ndarray, lpl: np.ndarray,
                   sensitive: np.ndarray) -> np.ndarray:
    """Per cell, whether its noise protects it: a sensitive cell moved up by at least its
    upper level or down by at least its lower level; every other cell True."""
    dev = np.asarray(noisy, dtype=float) - np.asarray(true, dtype=float)
    enough = np.where(dev >= 0, dev >= upl, -dev >= lpl)
    return ~np.asarray(sensitive, dtype=bool) | enough
