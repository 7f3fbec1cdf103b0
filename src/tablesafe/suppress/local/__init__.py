"""Local search for certificates: a small protection LP on a neighbourhood of one cell.

The building blocks of :mod:`tablesafe.suppress.fast` and its second pass
(:mod:`tablesafe.suppress.fast_cleanup`):

- :mod:`~tablesafe.suppress.local.relations`: the relations indexed by relation and by
  cell (:class:`RelationIndex`);
- :mod:`~tablesafe.suppress.local.geometry`: boxes of codes around a cell of a table
  with hierarchical dimensions (:class:`Geometry`, six box levels);
- :mod:`~tablesafe.suppress.local.lp`: the reusable HiGHS instance (:class:`LocalLP`);
- :mod:`~tablesafe.suppress.local.search`: neighbourhoods and the local LP on them
  (:class:`LocalSearch`, with its fixed data :class:`SearchSpace` and one request
  :class:`Query`);
- :mod:`~tablesafe.suppress.local.certificates`: building, collecting and writing out
  certificates (:class:`Certificates`, :class:`CertificateLog`,
  :func:`certificate_frame`).
"""

from tablesafe.structure.neighbours import gather
from tablesafe.suppress.local.certificates import (
    CertificateLog,
    Certificates,
    Part,
    both_ways,
    certificate_frame,
    unit_deviation,
)
from tablesafe.suppress.local.geometry import BOX_LEVELS, Geometry, code_sets
from tablesafe.suppress.local.lp import INF, LocalLP
from tablesafe.suppress.local.relations import RelationIndex
from tablesafe.suppress.local.search import (
    Found,
    LocalSearch,
    Query,
    SearchOptions,
    SearchSpace,
    target_first,
)

__all__ = [
    "BOX_LEVELS",
    "INF",
    "CertificateLog",
    "Certificates",
    "Found",
    "Geometry",
    "LocalLP",
    "LocalSearch",
    "Part",
    "Query",
    "RelationIndex",
    "SearchOptions",
    "SearchSpace",
    "both_ways",
    "certificate_frame",
    "code_sets",
    "gather",
    "target_first",
    "unit_deviation",
]
