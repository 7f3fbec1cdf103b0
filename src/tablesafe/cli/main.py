"""The ``tablesafe`` command line (contract in DESIGN.md "Command line")."""

from __future__ import annotations

import typer

import tablesafe

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Statistical disclosure control of tables.")


@app.command()
def version() -> None:
    """Print the tablesafe version."""
    typer.echo(tablesafe.__version__)


if __name__ == "__main__":  # pragma: no cover
    app()
