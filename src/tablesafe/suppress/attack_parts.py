"""The attacker LPs of many targets, in two parts side by side.

A repair's first check attacks every sensitive cell; the blocks of a pattern are
independent, so the targets are cut into two parts of whole blocks
(:func:`block_parts`) attacked in forked workers when there are two CPUs and one
after the other otherwise. A block's LPs see the same attacks in the same order either
way, so the result does not depend on the number of workers. Where one block holds
most of the targets (on three-way tables the whole pattern is often one block), the
targets are cut into two halves instead, and each half builds its own models of the
blocks it touches, which again does not depend on the number of workers. The later
rounds of the repair, with fewer targets, are cut the same way. The audit-guided repair
cuts the attacks the audit names into two halves of keys instead (:func:`key_halves`):
most of them fall into one large block.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tablesafe.audit.lp import credit_work, lp_work
from tablesafe.parallel import map_forked, worker_count
from tablesafe.problem import Problem
from tablesafe.suppress.attacker import Blocks

Part = Callable[[np.ndarray], dict]
"""Attacks of one part's targets (in the caller's process or a forked worker)."""


def attack_in_parts(attack: Part, problem: Problem, w: np.ndarray, targets: np.ndarray,
                    out_of_time: type[Exception]) -> dict:
    """``attack(targets)``, part by part (:func:`block_parts`), the parts' attacks
    merged in part order; ``out_of_time`` raised by a part is raised here."""
    return in_parts(attack, block_parts(problem, w, targets), out_of_time)


def in_parts(attack: Callable, parts: list, out_of_time: type[Exception]) -> dict:
    """``attack(part)`` for each of ``parts``, in forked workers where two CPUs are free
    and one after the other otherwise, merged in part order; ``out_of_time`` raised by a
    part is raised here, carrying (as ``attacks``, when it has that attribute) what every
    part settled before. Each part must build its own models, so that what it finds does
    not depend on what ran before it in the same process."""
    if len(parts) == 1:
        return attack(parts[0])
    global _PART_STATE
    _PART_STATE = (attack, parts, out_of_time)
    before = lp_work()
    try:
        done = map_forked(_one_part, range(len(parts)), worker_count())
    finally:
        _PART_STATE = None
    credit_work(sum(work for _, work in done), before)  # the same work clock either way
    outs = [out for out, _ in done]
    merged: dict = {}
    late = False
    for o in outs:
        if isinstance(o, _Late):
            late = True
            merged.update(o.attacks)
        else:
            merged.update(o)
    if late:
        # what every part settled before its deadline goes with the exception
        out = out_of_time()
        if hasattr(out, "attacks"):
            out.attacks = merged
        raise out
    return merged


def key_halves(keys: list, least: int) -> list[list]:
    """``keys`` (sorted) in two contiguous halves, or in one part when there are fewer
    than ``least``: attacks of nearby targets stay together, whose LPs start from each
    other's optima."""
    keys = sorted(keys)
    if len(keys) < least:
        return [keys]
    mid = (len(keys) + 1) // 2
    return [keys[:mid], keys[mid:]]


PARALLEL_MIN_TARGETS = 300
"""Fewest targets for which :func:`attack_in_parts` cuts them into parts by block
(measured on a generated 2,368-cell two-way table, 642 targets: 1.65 -> 1.1 s)."""

_PART_STATE: tuple | None = None  # what the forked workers read (set while they run)


def block_parts(problem: Problem, w: np.ndarray, targets: np.ndarray) -> list[np.ndarray]:
    """``targets`` in two parts of whole blocks of ``w`` balanced by their number of
    targets (largest blocks first, each to the smaller part), or one part below
    :data:`PARALLEL_MIN_TARGETS`; each part in ascending order. When whole blocks
    cannot balance them (one part would hold more than :data:`MOST_IN_ONE_PART` of the
    targets: one block holds most of them, as on three-way tables), the targets are cut
    into two halves in ascending order instead, from :data:`HALVES_MIN_TARGETS` on; each
    half then builds its own models of the blocks it touches."""
    if len(targets) < min(PARALLEL_MIN_TARGETS, HALVES_MIN_TARGETS):
        return [targets]
    parts = _whole_blocks(problem, w, targets)
    if max(len(p) for p in parts) <= MOST_IN_ONE_PART * len(targets):
        return parts if len(targets) >= PARALLEL_MIN_TARGETS else [targets]
    if len(targets) < HALVES_MIN_TARGETS:
        return [targets]
    ordered = np.sort(targets)
    mid = (len(ordered) + 1) // 2
    return [ordered[:mid], ordered[mid:]]


HALVES_MIN_TARGETS = 16
"""Fewest targets that :func:`block_parts` cuts into halves within a block."""

MOST_IN_ONE_PART = 0.6
"""Share of the targets above which a part of whole blocks counts as unbalanced."""


def _whole_blocks(problem: Problem, w: np.ndarray, targets: np.ndarray) -> list[np.ndarray]:
    """``targets`` in two parts of whole blocks of ``w`` (largest first, each to the
    smaller part), each in ascending order (one part when there is only one block)."""
    label = Blocks(problem.relations, w.astype(float)).label[targets]
    blocks, counts = np.unique(label, return_counts=True)
    part_of, _ = two_parts(blocks, counts.astype(float))
    which = np.array([part_of[int(b)] for b in label.tolist()])
    parts = [np.sort(targets[which == j]) for j in (0, 1)]
    return [p for p in parts if len(p)] or [targets]


def two_parts(blocks: np.ndarray, weight: np.ndarray) -> tuple[dict[int, int], list[float]]:
    """``blocks`` (their numbers) in two parts balanced by ``weight``: the heaviest first,
    each to the lighter part (ties by number). Returns each block's part and the parts'
    weights."""
    load = [0.0, 0.0]
    part_of: dict[int, int] = {}
    for i in np.lexsort((blocks, -weight)).tolist():
        j = 0 if load[0] <= load[1] else 1
        part_of[int(blocks[i])] = j
        load[j] += float(weight[i])
    return part_of, load


class _Late:
    """A part that ran out of time, with the attacks it settled before (its
    exception's ``attacks``, when it carries them)."""

    def __init__(self, attacks: dict | None) -> None:
        self.attacks = attacks or {}


def _one_part(j: int) -> tuple[dict | _Late, int]:
    """Worker: the attacks of part ``j`` of :data:`_PART_STATE` (:class:`_Late`: out of
    time) and the LP work they took."""
    assert _PART_STATE is not None
    attack, parts, out_of_time = _PART_STATE
    w0 = lp_work()
    try:
        out: dict | _Late = attack(parts[j])
    except out_of_time as exc:
        out = _Late(getattr(exc, "attacks", None))
    return out, lp_work() - w0
