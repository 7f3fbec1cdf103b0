"""tablesafe: statistical disclosure control of tables.

Stages (each a function from one plain data object to the next, see docs/architecture.md):

- ``tablesafe.tabulate(data, dims, response, ...)``: microdata -> :class:`CellTable`;
- ``tablesafe.assess(cells, rules, ...)``: CellTable -> :class:`Problem` with statuses,
  protection levels, bounds and costs (the rules stage, ``tablesafe.rules``);
- ``tablesafe.suppress(problem, method=...)``: Problem -> :class:`Pattern`;
- ``tablesafe.audit(problem, pattern)``: the attacker's intervals and a verdict per
  sensitive cell;
- ``tablesafe.protect(data, dims=..., response=..., rules=[...])`` chains them all and
  returns a :class:`ProtectResult` with the publication, the analyst cell table, the
  audit, information loss, run times, ``.write(...)`` and ``.report(...)``.

``tabulate``, ``suppress`` and ``audit`` are also the names of their subpackages; calling
the subpackage calls its main function (``tablesafe.audit(problem, pattern)`` is
``tablesafe.audit.audit(problem, pattern)``), and their other contents stay reachable as
attributes (``tablesafe.tabulate.DimSpec``).
"""

import importlib as _importlib
import inspect as _inspect
import types as _types

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
from tablesafe.rules import assess
from tablesafe.structure import CompiledModel, Dimension, Hierarchy, TableStructure, compile_tables
from tablesafe.version import __version__


class _StageModule(_types.ModuleType):
    """A stage subpackage that can be called like its main function (the function of
    the same name in it: ``tablesafe.audit(...)`` is ``tablesafe.audit.audit(...)``)."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        return getattr(self, self.__name__.rsplit(".", 1)[1])(*args, **kwargs)


for _name in ("tabulate", "suppress", "audit"):
    _stage = _importlib.import_module(f"tablesafe.{_name}")
    _stage.__class__ = _StageModule
    # inspect.signature and help() show the main function's arguments and description,
    # not the (*args, **kwargs) of __call__
    _main = getattr(_stage, _name)
    _sig = _inspect.signature(_main)
    setattr(_stage, "__signature__", _sig)  # noqa: B010 (a module has no such attribute to assign)
    _plain = _sig.replace(parameters=[p.replace(annotation=p.empty) for p in _sig.parameters.values()],
                          return_annotation=_sig.empty)
    _stage.__doc__ = (f"{(_stage.__doc__ or '').rstrip()}\n\nCalling ``tablesafe.{_name}{_plain}`` calls "
                      f":func:`tablesafe.{_name}.{_name}`:\n\n{_inspect.getdoc(_main) or ''}\n")
    globals()[_name] = _stage

from tablesafe.api import (
    ProtectResult,
    apply_apriori,
    audit_publication,
    prepare_problem,
    protect,
    protect_problem,
)

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
    "ProtectResult",
    "RuleError",
    "SolverTimeLimit",
    "TableStructure",
    "TablesafeError",
    "__version__",
    "apply_apriori",
    "assess",
    "audit",
    "audit_publication",
    "compile_tables",
    "prepare_problem",
    "protect",
    "protect_problem",
    "suppress",
    "tabulate",
]
