"""A small search instead of a dear box, once a ``fast`` pass has started its chains.

When the time left is only enough for certificates without an LP
(:mod:`tablesafe.suppress.local.chains`), each target left gets a box of cells around it,
or a chain of the totals containing it. On sparse tables a box must often climb to large
totals, because the siblings next to the target cannot take its move: one box can then
withhold hundreds of times what a searched target added. Such a target gets a search on
a small first box instead (:func:`small_boxes`: box levels :data:`SMALL_BOX_LEVELS`
within :data:`SMALL_MAX_BOX` code combinations, the cells already withheld first, no
relation hops), when its box costs more than :data:`PRICEY_BOX` times the cost a
searched target added so far on average, and when the search still leaves the chains of
the targets after it their time (:func:`small_search_due`). Its LPs are capped at that
time, and its certificate is kept only where its new cells cost no more than the box
(:meth:`~tablesafe.suppress.fast_first_pass.FirstPass._small_instead`; on the generated
``rand354`` at 20 s, keeping every one withheld 404 M against 151-162 M with boxes alone,
157 M so).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from tablesafe.suppress.local import LocalSearch

__all__ = ["PRICEY_BOX", "SMALL_BOX_LEVELS", "SMALL_MAX_BOX", "SMALL_SEARCH_SECONDS", "small_boxes",
           "small_search_due"]

PRICEY_BOX = 10.0
"""How many times the average cost a searched target added (its own certificate and its
insiders') a box or chain must cost before its target gets a small search instead.
Measured on the generated three-way ``rand353`` (16,093 cells, 0.9 enterprises a cell,
``fast`` at 120 s, sixty-ninth session): with the chains alone, 78-137 targets left at
117 s got boxes that added 495-550 M to a pattern of 52 M (one box 81.6 M for a target
of 0.08 M, a searched target adding about 0.01 M)."""

SMALL_SEARCH_SECONDS = 0.003
"""Seconds a small search is taken to need: it is tried only while the chains of the
targets after it still fit in the time left after that (measured on ``rand353``: 2.7 ms a
target, against about 1 ms for a box and 50 ms for a hurried search on its first box of
up to 20,000 code combinations)."""

SMALL_BOX_LEVELS = (1, 3)
"""Box levels of the small search (see :func:`tablesafe.suppress.local.geometry.code_sets`):
the target's code with its siblings, ancestors and descendants, else the compact set."""

SMALL_MAX_BOX = 4_000
"""Most code combinations of the small search's box (``FastOptions.max_box`` of tables
above ``wide_table`` cells)."""


def small_search_due(box_price: float, searched_cost: float, searched: int, now: float,
                     chains_from: float) -> bool:
    """Whether a target whose box (or chain) costs ``box_price`` gets a small search
    instead: ``searched`` targets have been searched and added ``searched_cost``
    (at least one, so that the average is known), the box costs more than
    :data:`PRICEY_BOX` times that average, and a search begun at ``now`` would end
    before ``chains_from`` (when the chains of the targets after it must start; all in
    seconds after the job's start)."""
    if searched <= 0 or now + SMALL_SEARCH_SECONDS >= chains_from:
        return False
    return box_price > PRICEY_BOX * searched_cost / searched


@contextmanager
def small_boxes(search: LocalSearch) -> Iterator[LocalSearch]:
    """``search`` with a small first box (:data:`SMALL_BOX_LEVELS`,
    :data:`SMALL_MAX_BOX`) and new complements allowed in the search that keeps single
    respondents fixed, until the block ends."""
    opts = search.options
    search.options = replace(opts, box_levels=SMALL_BOX_LEVELS, max_box=SMALL_MAX_BOX, strict_adds=True)
    try:
        yield search
    finally:
        search.options = opts
