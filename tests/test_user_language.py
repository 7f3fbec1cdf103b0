"""User-facing text speaks the statistician's language (issue 13, item 6): the command
line's help and the public API's docstrings cite publications by name, not the project's
internal reference numbers ("seed 003") or files that do not exist (DESIGN.md)."""

from __future__ import annotations

import inspect
import re
import types
from typing import Any

import typer.main
from typer.testing import CliRunner

import tablesafe
from tablesafe.cli.main import app

INTERNAL = re.compile(r"seed\s*_?0\d\d|seeds/|DESIGN\.md", re.IGNORECASE)


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand, as the words that call it."""
    out = [path]
    if hasattr(group, "commands"):
        for name, cmd in group.commands.items():
            out += _commands(cmd, (*path, name))
    return out


def test_command_line_help_has_no_internal_references():
    runner = CliRunner()
    root = typer.main.get_command(app)
    offending = {}
    for path in _commands(root):
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, (path, result.output)
        found = INTERNAL.findall(result.output)
        if found:
            offending[" ".join(path) or "tablesafe"] = found
    assert not offending, f"--help texts cite internal references: {offending}"


def _public_docs() -> dict[str, str]:
    """Docstrings of everything ``tablesafe`` exports: functions, classes with their
    public methods and properties, and the stage subpackages with their main function."""
    docs = {"tablesafe": tablesafe.__doc__ or ""}
    for name in tablesafe.__all__:
        obj = getattr(tablesafe, name)
        if isinstance(obj, types.ModuleType):
            docs[name] = obj.__doc__ or ""
            main = getattr(obj, name.rsplit(".", 1)[-1], None)
            if main is not None:
                docs[f"{name}.{name}"] = inspect.getdoc(main) or ""
            continue
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        docs[name] = inspect.getdoc(obj) or ""
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                target = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if callable(target) or isinstance(member, property):
                    docs[f"{name}.{attr}"] = inspect.getdoc(target) or ""
    return docs


def test_public_api_docstrings_have_no_internal_references():
    offending = {k: INTERNAL.findall(v) for k, v in _public_docs().items() if INTERNAL.search(v)}
    assert not offending, f"public docstrings cite internal references: {offending}"
