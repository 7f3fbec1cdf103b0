"""Tabulation: microdata or tabular input to a :class:`tablesafe.CellTable`.

``tabulate`` aggregates microdata with DuckDB (frames, CSV, Parquet, tau-ARGUS ``.asc``);
``from_tabular`` takes cells given directly; ``unit_contributions`` lists each unit's
contribution to each cell for audits.
"""

from tablesafe.tabulate.dims import DimSpec, dim_specs
from tablesafe.tabulate.microdata import tabulate, unit_contributions
from tablesafe.tabulate.tabular import from_tabular

__all__ = ["DimSpec", "dim_specs", "from_tabular", "tabulate", "unit_contributions"]
