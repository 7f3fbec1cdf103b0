"""``fast``'s first pass over several processes: targets split into groups, one worker
per group, and the workers' results merged.

Each worker receives the picklable :class:`~tablesafe.suppress.fast_first_pass.FirstPassJob`
and its group, and protects the group with a solver of its own
(:func:`~tablesafe.suppress.fast_first_pass.run_group`). The union of the groups'
patterns is proved by the union of their certificates, which stay valid when more cells
are withheld. Results are deterministic for a given number of groups.
"""

from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from typing import Any

import numpy as np

from tablesafe.parallel import one_blas_thread
from tablesafe.progress import Progress
from tablesafe.suppress.fast_first_pass import FirstPassJob, FirstPassResult, run_group
from tablesafe.suppress.local import Certificates, Geometry

__all__ = ["merge_results", "partition", "run_parallel"]


def partition(targets: np.ndarray, geo: Geometry | None, k: int, blocks: int = 8) -> list[np.ndarray]:
    """``k`` groups of about equal size; each keeps the targets' order (``FastOptions.order``).

    With a table structure the targets are cut into ``blocks * k`` contiguous ranges of
    the first dimension's codes (in hierarchy order, so mostly whole subtrees, whose
    certificates seldom meet), dealt out to the groups in turn so that each group gets
    parts of every region of the table (measured on the 1M table: with one range per
    group, one group took 2.3 times as long per target as the other). The targets at
    that dimension's total, which lie across every range and are the most expensive,
    are dealt out one by one. Without structure: the same with ranges of cell positions.
    """
    if k == 1:
        return [targets]
    pos = np.arange(len(targets))
    if geo is not None:
        key = geo.first_codes(targets)
        root = key == 0  # hierarchy codes are in pre-order: the total comes first
    else:
        key = targets
        root = np.zeros(len(targets), dtype=bool)
    rest = pos[~root][np.argsort(key[~root], kind="stable")]
    nb = blocks * k
    block = np.arange(len(rest)) * nb // max(len(rest), 1)
    # a range never splits one code: targets with the same key stay in one block
    first = np.concatenate(([True], np.diff(key[rest]) != 0))
    block = np.maximum.accumulate(np.where(first, block, 0))
    group = np.empty(len(targets), dtype=np.int64)
    group[rest] = block % k
    group[pos[root]] = np.arange(int(root.sum())) % k
    return [targets[group == g] for g in range(k)]


_COUNT: Any = None
"""In a worker: the count of protected targets shared with the parent (set by the pool)."""


def _share_count(count: Any) -> None:
    global _COUNT
    one_blas_thread()
    _COUNT = count


class _SharedCount:
    """A worker's progress: each protected target adds one to the count the parent reads."""

    def update(self, done: int, /) -> None:
        with _COUNT.get_lock():
            _COUNT.value += 1


def _run_counted(job: FirstPassJob, group: np.ndarray) -> FirstPassResult:
    return run_group(job, group, _SharedCount() if _COUNT is not None else None)


def run_parallel(job: FirstPassJob, groups: list[np.ndarray], progress: Progress | None = None,
                 poll: float = 2.0, processes: int | None = None) -> list[FirstPassResult]:
    """Protect every group in a forked worker process (``processes`` of them, default one
    per group); their results, in order, the same whatever the number of processes. While
    they run, ``progress`` shows how many targets the workers have protected together."""
    ctx = mp.get_context("fork")
    count = ctx.Value("q", 0)
    procs = len(groups) if processes is None else max(1, min(int(processes), len(groups)))
    with ctx.Pool(procs, initializer=_share_count, initargs=(count,)) as pool:
        pending = pool.starmap_async(_run_counted, [(job, group) for group in groups])
        while not pending.ready():
            pending.wait(poll)
            if progress is not None:
                progress.update(int(count.value))
        results = pending.get()
    if progress is not None:
        progress.update(int(count.value), force=True)
    return results


def merge_results(parts: list[FirstPassResult]) -> FirstPassResult:
    """One result for the union of the groups (insider certificates renumbered)."""
    certs = []
    labels: list[str] = []
    held: list[np.ndarray] = []
    found_by: Counter[str] = Counter()
    for q in parts:
        c = q.certs
        insider = np.where(c.insider >= 0, c.insider + len(labels), -1)
        certs.append(Certificates(c.target, c.direction, c.cell, c.dev, insider))
        labels.extend(q.labels)
        held.extend(q.held)
        found_by.update(q.found_by)
    return FirstPassResult(
        withheld=np.logical_or.reduce([q.withheld for q in parts]),
        certs=Certificates.concat(certs),
        labels=labels,
        held=held,
        found_by=dict(found_by),
        searched=sum(q.searched for q in parts),
        shared=sum(q.shared for q in parts),
        singleton_used=sum(q.singleton_used for q in parts),
        insider_pairs=sum(q.insider_pairs for q in parts),
        unprotectable=[t for q in parts for t in q.unprotectable],
        insider_open=[pair for q in parts for pair in q.insider_open],
        lp_solves=sum(q.lp_solves for q in parts),
        hurried=None if all(q.hurried is None for q in parts) else sum(
            q.searched if q.hurried is None else q.hurried for q in parts),
        hurried_by_clock=any(q.hurried_by_clock for q in parts),
        work=sum(q.work for q in parts),
        lp_capped=sum(q.lp_capped for q in parts),
        insider_added=np.logical_or.reduce([q.insider_added for q in parts]),
    )
