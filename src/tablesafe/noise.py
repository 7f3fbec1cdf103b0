"""Noise added to the microdata before tabulation (issue 14; seed 003 B.4, Evans' method).

Every company (holding, or the record itself without holdings) gets one direction, up or
down with equal probability, and each of its records a multiplier within ``m +- s``
percent of 1 on that side (``m`` the noise percentage, ``s`` its spread), from
:func:`tablesafe.adjust.noise.noise_multipliers`: the two sides are mirror images, so the
multipliers are symmetric about 1. The table is tabulated from the noisy values, which
keep it additive.

A sensitive cell is published with its noisy value when its noise already protects it:
the noisy value lies at least the upper protection level above the true value, or the
lower level below it (as controlled tabular adjustment asks). Every other sensitive cell
is withheld, with complements chosen by the default suppression method on the noisy
table, so that an attacker who knows the published noisy values cannot bring the cell
within its levels of the true value: its levels are measured from the true value, not the
noisy one. The noise percentage, spread and seed stay confidential (the report, an analyst
document, shows them; the publication does not).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.problem import SAFE, Problem
from tablesafe.suppress.methods import MethodInfo
from tablesafe.validation import NONE, Constraints, Interval, check_options

NOISE = "noise"
"""Noise added to the microdata (seed 003 B.4)."""

NOISE_REGISTRY: tuple[MethodInfo, ...] = (
    MethodInfo(NOISE, "noise added to the microdata (--noise-percent); sensitive cells the noise does not "
                      "protect withheld with complements"),
)

CONSTRAINTS: Constraints = {
    "noise_percent": [Interval(0.0, 100.0, closed="neither")],
    "noise_spread": [Interval(0.0), NONE],
}
"""The noise options (the spread must also stay below the percentage)."""

NOISY_COLUMN = "__tablesafe_noisy__"
"""The column of noisy response values added to the microdata for the second tabulation."""


@dataclass(frozen=True)
class NoiseOptions:
    """The noise method's options as checked at the run's entry.

    Attributes:
        percent: the multipliers' distance from 1, in percent (0 < percent < 100).
        spread: half-width of the uniform band around ``percent`` (0 <= spread < percent).
        seed: the random seed (the same seed gives the same noise).
    """

    percent: float = 10.0
    spread: float = 3.0
    seed: int = 0

    @classmethod
    def build(cls, noise_percent: Any = 10.0, noise_spread: Any = None, seed: int = 0) -> NoiseOptions:
        """Checked options (:data:`CONSTRAINTS`; spread default: 0.3 times the percentage)."""
        check_options({"noise_percent": noise_percent, "noise_spread": noise_spread}, CONSTRAINTS, error=InputError)
        p = float(noise_percent)
        s = 0.3 * p if noise_spread is None else float(noise_spread)
        if not s < p:
            raise InputError(f"noise_spread must lie in [0, noise_percent) so that no multiplier reaches 1 "
                             f"(--noise-spread), got {noise_spread!r} with noise_percent {p:g}")
        return cls(percent=p, spread=s, seed=int(seed))


def noisy_data(data: Any, response: str, holding: str | None, options: NoiseOptions,
               numbers: tuple[str, ...] = (), encoding: str | None = None) -> pd.DataFrame:
    """The microdata with :data:`NOISY_COLUMN`: the response times each record's multiplier
    (records of one holding share its direction). Files and tau-ARGUS sources are read as
    the tabulation reads them (:func:`tablesafe.io.frames.open_source`: CSV columns as
    text, so codes keep their leading zeros), the response and ``numbers`` as numbers."""
    if isinstance(data, pd.DataFrame):
        frame = data.copy()
    elif hasattr(data, "to_pandas"):
        frame = data.to_pandas()
    else:
        import duckdb

        from tablesafe.io.frames import open_source

        con = duckdb.connect()
        src = open_source(con, data, encoding=encoding)
        frame = con.sql(f"select * from {src.from_sql}").df()
        for col in (response, *numbers):
            if col in frame.columns:
                frame[col] = pd.to_numeric(frame[col])
    if response not in frame.columns:
        raise InputError("the response variable is not a column of the data", column=response)
    companies = frame[holding].to_numpy() if holding is not None else np.arange(len(frame))
    frame[NOISY_COLUMN] = frame[response].to_numpy(dtype=float) * multipliers(companies, options)
    return frame


def multipliers(companies: np.ndarray, options: NoiseOptions) -> np.ndarray:
    """One multiplier per record (:func:`tablesafe.adjust.noise.noise_multipliers`: one
    direction per company, sizes within ``percent +- spread`` percent)."""
    # imported here: tablesafe.adjust imports the method registry, which imports this module
    from tablesafe.adjust.noise import noise_multipliers

    mult, _ = noise_multipliers(np.asarray(companies).astype(str), options.percent, seed=options.seed,
                                spread=options.spread / options.percent)
    return mult


@dataclass(frozen=True)
class Noise:
    """What the noise did to the table (confidential: analyst file and report only).

    Attributes:
        true: the true cell values; noisy: the values tabulated from noisy microdata.
        by_noise: sensitive cells the noise protects (published with their noisy value).
        options: the percentage, spread and seed.
        stats: counts and errors (:func:`noise_stats`).
    """

    true: np.ndarray
    noisy: np.ndarray
    by_noise: np.ndarray
    options: NoiseOptions
    stats: dict = field(default_factory=dict)

    @property
    def deviation(self) -> np.ndarray:
        """``noisy - true`` per cell."""
        return self.noisy - self.true


def noised_problem(problem: Problem, noisy: np.ndarray) -> tuple[Problem, np.ndarray]:
    """The problem to suppress on the noisy table: noisy values and costs, sensitive cells
    the noise protects (:func:`tablesafe.adjust.noise.noise_protects`) made safe, the others
    with levels measured from the true value (``true + upl`` and ``true - lpl`` must stay
    reachable). Returns it and the mask of sensitive cells the noise protects."""
    from tablesafe.adjust.noise import noise_protects

    v = np.asarray(problem.value, dtype=float)
    e = np.asarray(noisy, dtype=float) - v
    sens = problem.sensitive
    by_noise = sens & noise_protects(v, noisy, problem.upl, problem.lpl, sens)
    status = np.where(by_noise, SAFE, problem.status)
    upl = np.where(sens & ~by_noise, np.maximum(problem.upl - e, 0.0), 0.0)
    lpl = np.where(sens & ~by_noise, np.maximum(problem.lpl + e, 0.0), 0.0)
    lower = np.minimum(problem.lower, noisy)
    upper = np.maximum(problem.upper, noisy)
    lpl = np.minimum(lpl, noisy - lower)
    cost = np.abs(noisy) if np.allclose(problem.cost, np.abs(v)) else problem.cost
    out = problem.copy(value=np.asarray(noisy, dtype=float), status=status, upl=upl, lpl=lpl, lower=lower,
                       upper=upper, cost=cost, capacity=None)
    return out, by_noise


def published_errors(true: np.ndarray, noisy: np.ndarray, withheld: np.ndarray) -> np.ndarray:
    """``|noisy - true| / |true|`` of every published cell whose true value is not 0."""
    keep = ~np.asarray(withheld, dtype=bool) & (true != 0)
    return np.abs(noisy[keep] - true[keep]) / np.abs(true[keep])


def noise_stats(true: np.ndarray, noisy: np.ndarray, withheld: np.ndarray, by_noise: np.ndarray,
                sensitive: np.ndarray) -> dict:
    """Share of cells published and their mean relative error (issue 14's measures)."""
    published = ~withheld
    rel = published_errors(true, noisy, withheld)
    return {"cells": len(true), "published": int(published.sum()),
            "published_share": float(published.mean()) if len(true) else 0.0,
            "mean_relative_error": float(rel.mean()) if rel.size else 0.0,
            "largest_relative_error": float(rel.max()) if rel.size else 0.0,
            "sensitive": int(sensitive.sum()), "sensitive_published_by_noise": int(by_noise.sum()),
            "withheld": int(withheld.sum())}
