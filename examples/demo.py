"""The demo run of `make demo`: the whole pipeline on the bundled example data.

Protects turnover by industry (parent-child hierarchy in industry.csv) x region (.hrc),
contributions summed per enterprise group, rules p(15) and freq(3), and writes to
``demo-output/``: the publication, the analyst file, the HTML report and the protection
certificates. The same run is in ``examples/demo.toml`` (``tablesafe run``).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import tablesafe

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "demo-output"


def stage_available(module: str, name: str) -> bool:
    """True when a pipeline stage is installed (the demo grows with the product)."""
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def main() -> None:
    method = "modular"
    if not stage_available("tablesafe.suppress", "suppress"):
        method = "none"
        print("note: the suppression stage is not installed yet; running primary suppression only "
              "(no safety claim)")
    certificates = method != "none"
    result = tablesafe.protect(
        HERE / "enterprises.csv",
        dims={"industry": HERE / "industry.csv", "region": HERE / "region.hrc"},
        response="turnover",
        rules=["p(15)", "freq(3)"],
        holding="group",
        method=method,
        certificates=certificates,
        progress=True,
    )
    OUT.mkdir(exist_ok=True)
    result.write(
        out=OUT / "publication.csv",
        cells=OUT / "cells.csv",
        report=OUT / "report.html",
        certificates=OUT / "certificates.parquet" if result.certificates is not None else None,
    )
    print(result.summary())
    for name in ("publication.csv", "cells.csv", "report.html", "certificates.parquet"):
        if (OUT / name).exists():
            print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
