"""The plain data a ``fast`` first pass starts from and ends with: its job (what
every worker process receives) and its result (what each returns), see
:mod:`tablesafe.suppress.fast_first_pass`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablesafe.suppress.fast_options import FastOptions
from tablesafe.suppress.fast_ranges import CellRanges
from tablesafe.suppress.local import Certificates, SearchSpace

__all__ = ["FirstPassJob", "FirstPassResult"]


@dataclass(frozen=True)
class FirstPassJob:
    """Everything protecting a group of targets needs (picklable: worker processes
    receive it instead of sharing the parent's state).

    Attributes:
        space: the local search's fixed data.
        ranges: protection amounts, movement ranges and weights per cell.
        withheld: the pattern to start from (the sensitive cells and an initial pattern).
        names: cell names (for the insider certificates' labels).
        options: the run's options (size-dependent defaults settled).
        insiders: also find certificates that keep single respondents' cells fixed.
        n_targets: targets of the whole run (for the log line).
        start: ``time.perf_counter()`` at the start of the run.
        give_up_after: seconds after ``start`` at which to raise :class:`SolverTimeLimit`
            (with ``by_clock`` set: the guard of ``give_up_work``).
        give_up_work: LP work (:func:`~tablesafe.audit.lp.lp_work`) a group may spend
            before :class:`SolverTimeLimit` is raised: the same point in every run.
        hurry_after: seconds after ``start`` from which the search that keeps single
            respondents' cells fixed may add complements (``FastOptions.strict_adds``:
            quicker, withholds more), so that a time limit holds; with ``hurry_work``,
            the guard on the clock of that work bound.
        hurry_work: LP work a group may spend before its search hurries: the same point
            in every run (``None``: the clock alone decides).
        chain_after: seconds after ``start`` from which each target left gets a
            certificate without an LP where one exists (a box around it, else a chain of
            the totals containing it), so that the pass ends within a time limit; once
            the pass has made ``fast_pace.PACED_FROM`` hurried searches, only ``limit``
            decides (:func:`~tablesafe.suppress.fast_pace.chains_due`).
        limit: the run's time limit, in seconds after ``start``: the chains also start
            earlier when those of the targets left and the run's last steps would
            otherwise end past it (:func:`~tablesafe.suppress.fast_pace.chains_needed`).
    """

    space: SearchSpace
    ranges: CellRanges
    withheld: np.ndarray
    names: np.ndarray
    options: FastOptions
    insiders: bool
    n_targets: int
    start: float
    give_up_after: float | None
    hurry_after: float | None = None
    chain_after: float | None = None
    give_up_work: int | None = None
    limit: float | None = None
    hurry_work: int | None = None


@dataclass
class FirstPassResult:
    """What a first pass (or a worker's share of it) found.

    Attributes:
        withheld: the pattern (the job's and every cell a certificate moves).
        certs: the certificates (``insider`` indexes ``labels`` and ``held``).
        labels: per insider certificate, the names of the cells it keeps fixed.
        held: per insider certificate, those cells.
        found_by: how many certificates each kind of neighbourhood gave.
        searched: targets that got a certificate by a local search.
        shared: targets protected by an earlier certificate's direction.
        singleton_used: certificates that move single respondents' cells.
        insider_pairs: (target, single respondent) pairs that needed an insider certificate.
        unprotectable: targets without any certificate.
        insider_open: (target, single respondent) pairs without an insider certificate.
        lp_solves: local LPs solved.
        insider_added: cells first withheld by an insider certificate (what protecting
            single respondents' insiders cost beyond the targets' own certificates).
        hurried: targets searched before the search hurried (``None``: it did not).
        hurried_by_clock: the clock hurried it (a guard, or the chain time), not the
            job's ``hurry_work``: another run may hurry elsewhere.
        work: LP work (:func:`~tablesafe.audit.lp.lp_work`) the pass did, in all groups.
        lp_capped: LPs stopped by their cap (:meth:`FirstPass._capped_protect`; the
            clock decided).
    """

    withheld: np.ndarray
    certs: Certificates
    labels: list[str]
    held: list[np.ndarray]
    found_by: dict[str, int]
    searched: int
    shared: int
    singleton_used: int
    insider_pairs: int
    unprotectable: list[int]
    insider_open: list[tuple[int, int]]
    lp_solves: int
    insider_added: np.ndarray
    hurried: int | None = None
    hurried_by_clock: bool = False
    work: int = 0
    lp_capped: int = 0
