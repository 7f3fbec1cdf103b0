"""The demo run of `make demo`: the whole pipeline on the bundled example data.

Writes its files to ``demo-output/``.
"""

from __future__ import annotations

from pathlib import Path

from tablesafe import Dimension, Hierarchy, TableStructure, compile_tables

HERE = Path(__file__).parent


def main() -> None:
    region = Hierarchy.from_hrc(HERE / "region.hrc")
    industry = Hierarchy.from_parent_child(HERE / "industry.csv")
    model = compile_tables(TableStructure((Dimension("industry", industry), Dimension("region", region))))
    print(f"table industry x region: {model.size} cells, {model.relations.shape[0]} relations")


if __name__ == "__main__":
    main()
