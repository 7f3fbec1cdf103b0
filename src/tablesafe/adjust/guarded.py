"""Running a solver in a forked child process that is killed at a hard deadline.

HiGHS checks its time limit between nodes and iterations, not inside every step of its
root node: on a 13,851-cell three-way rounding MILP it ran far past the limit it was
given. An adjustment MILP therefore runs in a child process (``fork``: the child gets the
model's arrays without pickling) and sends its answer back through a pipe; at the
deadline the parent stops waiting, kills the child and goes on with what it has (the
heuristic's table, or a clear failure).
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from typing import Any

GRACE = 2.0
"""Seconds the parent waits past the deadline for an answer already being sent."""


def _child(conn: Any, fn: Callable[..., Any], args: tuple) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - the parent reports it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def run_guarded(fn: Callable[..., Any], args: tuple, seconds: float) -> tuple[str, Any]:
    """``fn(*args)`` in a child process, waited for at most ``seconds`` (+ :data:`GRACE`).

    Returns:
        ``("ok", result)``; ``("error", message)`` when ``fn`` raised; ``("timeout",
        seconds waited)`` when the child was killed at the deadline; ``("died", exit
        code)`` when it ended without an answer.
    """
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(sender, fn, args), daemon=True)
    t0 = time.perf_counter()
    child.start()
    sender.close()
    try:
        if receiver.poll(max(0.0, seconds) + GRACE):
            try:
                return receiver.recv()
            except EOFError:
                child.join(GRACE)
                return "died", child.exitcode
        return "timeout", time.perf_counter() - t0
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
