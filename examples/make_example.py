"""Generate the bundled example: enterprise turnover by industry and region.

Deterministic (fixed seed). Writes ``enterprises.csv`` (one record per local unit:
enterprise group, enterprise, industry, region, turnover, employees, weight, waiver),
``region.hrc`` (tau-ARGUS hierarchy) and ``industry.csv`` (parent-child hierarchy).
Run: ``python examples/make_example.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
REGIONS = {"North": ["N1", "N2", "N3"], "East": ["E1", "E2"], "South": ["S1", "S2", "S3"], "West": ["W1", "W2"]}
INDUSTRY = {
    "A": ["A01", "A02"],
    "C": ["C10", "C11", "C20", "C25"],
    "F": ["F41", "F43"],
    "G": ["G46", "G47"],
    "J": ["J58", "J62"],
}


def main() -> None:
    rng = np.random.default_rng(20261122)
    regions = [r for kids in REGIONS.values() for r in kids]
    industries = [c for kids in INDUSTRY.values() for c in kids]
    n_groups = 900
    rows = []
    unit = 0
    for g in range(n_groups):
        size = rng.choice([1, 1, 1, 1, 2, 2, 3, 5])
        home_ind = rng.choice(industries, p=_weights(len(industries), rng))
        scale = rng.lognormal(mean=6.0, sigma=1.6)
        for _ in range(size):
            unit += 1
            ind = home_ind if rng.random() < 0.8 else rng.choice(industries)
            reg = rng.choice(regions, p=_weights(len(regions), rng))
            turnover = round(float(scale * rng.lognormal(0.0, 0.7)), 2)
            employees = max(1, int(turnover / rng.uniform(80, 200)))
            rows.append((f"G{g:04d}", f"E{unit:05d}", ind, reg, turnover, employees, 1.0, int(rng.random() < 0.02)))
    with open(HERE / "enterprises.csv", "w") as fh:
        fh.write("group,enterprise,industry,region,turnover,employees,weight,waiver\n")
        for r in rows:
            fh.write(",".join(str(x) for x in r) + "\n")
    with open(HERE / "region.hrc", "w") as fh:
        for parent, kids in REGIONS.items():
            fh.write(parent + "\n")
            for k in kids:
                fh.write("@" + k + "\n")
    with open(HERE / "industry.csv", "w") as fh:
        fh.write("code,parent\n")
        for parent, kids in INDUSTRY.items():
            fh.write(f"{parent},Total\n")
            for k in kids:
                fh.write(f"{k},{parent}\n")


def _weights(n: int, rng: np.random.Generator) -> np.ndarray:
    w = rng.gamma(2.0, 1.0, size=n)
    return w / w.sum()


if __name__ == "__main__":
    main()
