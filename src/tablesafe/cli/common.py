"""Shared pieces of the command line: error reporting, exit codes, consoles."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from tablesafe.errors import TablesafeError

T = TypeVar("T")

#: Exit statuses: 0 success; 1 audit found unprotected cells; 2 bad input or failed run;
#: 3 unexpected internal error; 130 interrupted.
EXIT_OK, EXIT_UNSAFE, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


def one_paragraph(message: str) -> str:
    """Fold a message into one paragraph (no blank lines, no line breaks)."""
    return " ".join(str(message).split())


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print ``error: message`` as one paragraph on stderr and return the Exit to raise."""
    typer.echo(f"error: {one_paragraph(message)}", err=True)
    return typer.Exit(code)


def guarded(fn: Callable[[], T]) -> T:
    """Run a command body; turn every failure into one paragraph and a non-zero exit.

    A :class:`~tablesafe.errors.TablesafeError` exits with status 2, any other exception
    with status 3 (set ``TABLESAFE_DEBUG=1`` to see its traceback).
    """
    try:
        return fn()
    except typer.Exit:
        raise
    except TablesafeError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise fail("interrupted; nothing was written", 130) from None
    except Exception as exc:
        if os.environ.get("TABLESAFE_DEBUG"):
            raise
        raise fail(
            f"unexpected internal error ({type(exc).__name__}: {exc}); nothing was written. "
            "Set TABLESAFE_DEBUG=1 to see the traceback and please report it.",
            EXIT_INTERNAL,
        ) from None


def say(quiet: bool, *args: Any, **kw: Any) -> None:
    """Print to stdout unless ``quiet``."""
    if not quiet:
        out.print(*args, **kw)


def stdout_is_tty() -> bool:
    """True when stdout is an interactive terminal."""
    return sys.stdout.isatty()
