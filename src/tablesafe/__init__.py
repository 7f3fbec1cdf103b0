"""tablesafe: statistical disclosure control of tables.

Stages (each a function from one plain data object to the next, see DESIGN.md):
tabulate (microdata -> CellTable), assess (CellTable -> Problem with statuses and
protection levels), suppress (Problem -> Pattern), audit (Problem + Pattern -> audit
result), publish (files and report).
"""

from tablesafe.celltable import CellTable
from tablesafe.errors import (
    AuditFailure,
    HierarchyError,
    InfeasibleError,
    InputError,
    NonAdditiveError,
    RuleError,
    SolverTimeLimit,
    TablesafeError,
)
from tablesafe.problem import Pattern, Problem
from tablesafe.structure import CompiledModel, Dimension, Hierarchy, TableStructure, compile_tables

__version__ = "0.1.0"

__all__ = [
    "AuditFailure",
    "CellTable",
    "CompiledModel",
    "Dimension",
    "Hierarchy",
    "HierarchyError",
    "InfeasibleError",
    "InputError",
    "NonAdditiveError",
    "Pattern",
    "Problem",
    "RuleError",
    "SolverTimeLimit",
    "TableStructure",
    "TablesafeError",
    "compile_tables",
]
