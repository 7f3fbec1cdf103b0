"""Dimensions, hierarchies and the compilation of tables to cells plus linear relations."""

from tablesafe.structure.hierarchy import DEFAULT_TOTAL, Hierarchy, natural_key
from tablesafe.structure.table import (
    NAME_SEP,
    CompiledModel,
    Dimension,
    TableStructure,
    compile_tables,
)

__all__ = [
    "DEFAULT_TOTAL",
    "NAME_SEP",
    "CompiledModel",
    "Dimension",
    "Hierarchy",
    "TableStructure",
    "compile_tables",
    "natural_key",
]
