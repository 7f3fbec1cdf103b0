"""Worker processes: how many a step may use, and a map over forked workers.

Steps that share out independent parts (the insider audit's parts, the repair's first
check, the modular subtables) fork workers that inherit what they need from the parent,
so nothing large is pickled on the way in. Each step cuts its parts the same way
whatever the number of workers, so its result does not depend on it.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def worker_count(most: int = 2) -> int:
    """The processes a step may use: the CPUs this process may run on, at most
    ``most``; 1 inside a pool's worker (it cannot start processes of its own)."""
    if mp.current_process().daemon:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(most, cpus))


def one_blas_thread() -> None:
    """Keep this process's BLAS (OpenBLAS behind numpy and scipy) to one thread: the
    initializer of every forked worker. Two workers on two cores whose BLAS each keeps a
    thread of its own spinning make every vector operation wait for a core: measured on
    Castro's NINE5D (``optimal`` at 10 s, fifty-fourth session), single LSQR rankings of
    the completing certificates' hurried search took 2.3 s instead of 0.15 s, and the
    norms in a forked pair ran 4-24 times slower than in one process."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


@functools.cache
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def blas_on_one_thread() -> AbstractContextManager:
    """A context in which BLAS runs on one thread in this process, whatever its default
    (about 10 microseconds to enter and leave). The local search's LSQR rankings run in
    it, so that their sums are added in the same order in the main process (two BLAS
    threads split a dot product of more than 10,000 terms between them) and in a forked
    worker (:func:`one_blas_thread`): the pattern does not depend on the number of
    workers."""
    return _blas_controller().limit(limits=1, user_api="blas")


def map_forked(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``[fn(x) for x in items]``, in up to ``workers`` forked processes when there are
    more than one of each (``fn`` reads what it needs from module state set before)."""
    n = min(workers, len(items))
    if n <= 1 or mp.current_process().daemon:
        return [fn(x) for x in items]
    with mp.get_context("fork").Pool(n, initializer=one_blas_thread) as pool:
        return pool.map(fn, items, chunksize=1)
