"""Small helpers around highspy: build an LP/MIP from sparse matrices and read results."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import highspy
import numpy as np
import scipy.sparse as sp

INF = highspy.kHighsInf
INFINITE_BOUND = 1e20
"""HiGHS's default ``infinite_bound``: bounds at or beyond it are infinite."""


def _finite(a: np.ndarray) -> np.ndarray:
    """Map numpy infinities to HiGHS's infinity."""
    out = np.asarray(a, dtype=float).copy()
    out[np.isposinf(out)] = INF
    out[np.isneginf(out)] = -INF
    return out


_BANNER_SEEN: set[int] = set()

_WORK = [0]
RUN_WORK = 10
"""Work units a run counts besides its simplex iterations and its size (:func:`lp_work`):
a run that presolve alone answers does work too."""
SIZE_PER_UNIT = 60
"""Rows plus columns of a model per work unit of each run: setting up a solve and reading
its solution grow with the model (fitted on 27,000 attacker LPs of cleanups of generated
tables, thirty-third session: 28.5 microseconds per iteration, 0.49 per row or column)."""
MIP_ITERATION_WORK = 10
"""Work units per simplex iteration of a MIP, whose nodes also propagate, separate and
branch (measured on the masters of ``optimal`` on Castro's TABLE7, TABLE8 and
HIE1372D, thirty-third session: 213-258 microseconds per iteration, against 20-40 for
the attacker LPs; with 8 TABLE7 and TABLE8 did 31,600 and 38,000 units per second, with
12 TABLE8 stopped at 8.6 s of its 15 with a 25 % costlier pattern)."""


class LPOutOfTime(Exception):
    """An LP was about to start past the deadline or the work bound of :func:`stop_at`
    (``why``: ``"clock"`` or ``"work"``)."""

    def __init__(self, message: str, why: str = "clock") -> None:
        super().__init__(message)
        self.why = why


_DEADLINE = [float("inf")]
_WORK_BOUND = [2**62]


@contextmanager
def stop_at(deadline: float | None, work: int | None = None) -> Iterator[None]:
    """Within the block, every HiGHS run of this process (and of the workers it forks)
    that would start past ``deadline`` (a ``time.monotonic()`` value; ``None``: none),
    or once :func:`lp_work` has reached ``work`` (``None``: no bound; checked first, so
    that where it decides every run stops at the same LP), raises :class:`LPOutOfTime`
    instead. For steps whose LPs sit deep in loops of their own (an audit within a
    time-limited repair, a cleanup's trial of one complement); nested blocks keep the
    earlier deadline and the lower bound."""
    saved, saved_work = _DEADLINE[0], _WORK_BOUND[0]
    if deadline is not None:
        _DEADLINE[0] = min(saved, float(deadline))
    if work is not None:
        _WORK_BOUND[0] = min(saved_work, int(work))
    try:
        yield
    finally:
        _DEADLINE[0], _WORK_BOUND[0] = saved, saved_work


class _MeteredHighs(highspy.Highs):
    """``highspy.Highs`` whose every run adds its work to this process's count
    (:func:`lp_work`) and first checks the work bound and the deadline of :func:`stop_at`."""

    def run(self):  # type: ignore[no-untyped-def]
        if _WORK[0] >= _WORK_BOUND[0]:
            raise LPOutOfTime("an LP would start past its work bound", why="work")
        if _DEADLINE[0] != float("inf") and time.monotonic() > _DEADLINE[0]:
            raise LPOutOfTime("an LP would start past its deadline")
        status = super().run()
        if self.getModelStatus() == highspy.HighsModelStatus.kNotset:
            # another model of this process set up HiGHS's thread scheduler with other
            # threads (a caller's own HiGHS models): set it up afresh and run again
            fresh_scheduler()
            status = super().run()
        _WORK[0] += run_work(self)
        return status


def fresh_scheduler() -> None:
    """Drop HiGHS's thread scheduler of this process, so that the next model sets it up
    for its own threads (tablesafe's models run on one).

    HiGHS keeps one scheduler per process, set up by the first model that runs; a later
    model asking for another number of threads does not run (model status 'Not Set').
    A process that ran HiGHS models with the default threads before calling tablesafe
    (a script of the caller's, or ``benchmarks/plain_lp.py`` in a benchmark's process)
    gave every attacker LP that status, in the process and in the workers it forked,
    which inherit the scheduler: ``fast`` then reported all 2,467 sensitive cells of
    Castro's CBS as impossible to protect, and another run as unprotectable for want
    of a dual (forty-fourth session). Every model of tablesafe runs through
    :class:`_MeteredHighs`, which calls this and runs again when a model comes back
    'Not Set' (once per process: the scheduler it sets up then serves the rest)."""
    highspy.Highs.resetGlobalScheduler(False)



def add_work(units: int) -> None:
    """Count ``units`` of work done outside HiGHS (the attackers' flows of
    :mod:`tablesafe.suppress.flow_attacks`) in :func:`lp_work`, so that work bounds and
    work clocks see it."""
    _WORK[0] += int(units)


def credit_work(spent: int, before: int) -> None:
    """Count in this process the ``spent`` units of a step that may have run in forked
    workers, ``before`` being :func:`lp_work` when it started: what this process did
    not count itself is added, so that a work clock reads the same whether the step
    ran here or in workers."""
    add_work(max(int(spent) - (_WORK[0] - int(before)), 0))


def run_work(h: highspy.Highs) -> int:
    """The work units of ``h``'s last run: :data:`RUN_WORK`, one per
    :data:`SIZE_PER_UNIT` rows and columns, each simplex iteration
    (:data:`MIP_ITERATION_WORK` in a MIP), each iteration of crossover, and
    :data:`IPM_ITERATION_WORK` per iteration of the interior point method."""
    ok, nodes = h.getInfoValue("mip_node_count")
    mip = ok == highspy.HighsStatus.kOk and nodes >= 0
    iterations = _count(h, "simplex_iteration_count")
    return (RUN_WORK + (h.getNumRow() + h.getNumCol()) // SIZE_PER_UNIT
            + iterations * (MIP_ITERATION_WORK if mip else 1)
            + _count(h, "crossover_iteration_count") + IPM_ITERATION_WORK * _count(h, "ipm_iteration_count"))


IPM_ITERATION_WORK = 50
"""Work units per iteration of the interior point method (a factorization each), which
only the local searches' large LPs use (:class:`~tablesafe.suppress.local.lp.LocalLP`).
Before, neither its iterations nor crossover's counted: on Castro's TWO5IN6 one such LP
of 20,401 rows and columns ran 2.97 s (22 iterations, 2,677 of crossover) and counted
350 units (forty-eighth session)."""


def _count(h: highspy.Highs, name: str) -> int:
    """An iteration count of ``h``'s last run (0 when HiGHS has none)."""
    ok, value = h.getInfoValue(name)
    return int(value) if ok == highspy.HighsStatus.kOk and value > 0 else 0


def lp_work() -> int:
    """Work done by this process's HiGHS models so far, in units of about one simplex
    iteration of an attacker LP (:func:`run_work`).

    A measure of the work done that, unlike the clock, is the same in every run on the
    same input (HiGHS runs single-threaded with a fixed seed): a step bounded by it
    stops at the same point however loaded or fast the machine is. Work done in worker
    processes is counted there, and here only where the step that forked them credits
    it (:func:`credit_work`: the repair check's and the cleanup's parts).
    """
    return _WORK[0]


def _quiet_highs() -> highspy.Highs:
    """``highspy.Highs()`` without the banner HiGHS prints on the first model of a process
    (its output options can only be set after construction): standard output is sent to
    the null device for that one construction."""
    import os
    import sys

    pid = os.getpid()
    if pid in _BANNER_SEEN:
        return _MeteredHighs()
    _BANNER_SEEN.add(pid)
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = _MeteredHighs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    return h


def new_highs() -> highspy.Highs:
    """A quiet single-threaded HiGHS instance with deterministic settings.

    Every HiGHS model of tablesafe is made here. HiGHS sets up one thread scheduler per
    process, and a later model asking for another number of threads fails to run (status
    'Not Set'): seen when modular's subtables ran in worker processes and the main
    process's first models were the attacker LPs, which asked for the default.
    """
    h = _quiet_highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("log_to_console", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    return h


def pass_lp(
    h: highspy.Highs,
    cost: np.ndarray,
    col_lower: np.ndarray,
    col_upper: np.ndarray,
    matrix: sp.spmatrix,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    *,
    integrality: np.ndarray | None = None,
    maximize: bool = False,
) -> None:
    """Load ``min/max cost @ x`` s.t. ``row_lower <= matrix @ x <= row_upper``, bounds on x."""
    a = sp.csc_matrix(matrix)
    a.sort_indices()
    pass_columns(h, cost, _finite(col_lower), _finite(col_upper), _finite(row_lower), _finite(row_upper),
                 a.indptr, a.indices, a.data, integrality=integrality, maximize=maximize)


def pass_columns(h: highspy.Highs, cost: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray,
                 row_lower: np.ndarray, row_upper: np.ndarray, start: np.ndarray, index: np.ndarray,
                 value: np.ndarray, *, integrality: np.ndarray | None = None, maximize: bool = False) -> None:
    """Load a model given by arrays, its matrix column-wise (``start``, ``index``,
    ``value`` as in CSC); bounds already in HiGHS's infinity.

    The arrays go to HiGHS as they are: filling a ``HighsLp`` attribute by attribute
    converts each array element by element, which cost 0.84 ms against 0.23 ms here for a
    600-column neighbourhood model, more than solving it (sixty-second session)."""
    n = len(cost)
    integ = (np.zeros(n, dtype=np.int32) if integrality is None
             else np.asarray(integrality, dtype=bool).astype(np.int32) * int(highspy.HighsVarType.kInteger))
    status = h.passModel(
        int(n), len(row_lower), len(value), int(highspy.MatrixFormat.kColwise),
        int(highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize), 0.0,
        np.ascontiguousarray(cost, dtype=np.float64), np.ascontiguousarray(col_lower, dtype=np.float64),
        np.ascontiguousarray(col_upper, dtype=np.float64), np.ascontiguousarray(row_lower, dtype=np.float64),
        np.ascontiguousarray(row_upper, dtype=np.float64), np.ascontiguousarray(start, dtype=np.int32),
        np.ascontiguousarray(index, dtype=np.int32), np.ascontiguousarray(value, dtype=np.float64), integ)
    if status == highspy.HighsStatus.kError:
        raise ValueError("HiGHS refused the model")


def status(h: highspy.Highs) -> str:
    """``optimal``, ``unbounded``, ``infeasible`` or another HiGHS status name."""
    s = h.getModelStatus()
    if s == highspy.HighsModelStatus.kOptimal:
        return "optimal"
    if s in (highspy.HighsModelStatus.kUnbounded,):
        return "unbounded"
    if s == highspy.HighsModelStatus.kInfeasible:
        return "infeasible"
    if s == highspy.HighsModelStatus.kUnboundedOrInfeasible:
        return "unbounded_or_infeasible"
    return h.modelStatusToString(s)


def col_values(h: highspy.Highs) -> np.ndarray:
    """Primal column values of the last solve."""
    return np.asarray(h.getSolution().col_value, dtype=float)
