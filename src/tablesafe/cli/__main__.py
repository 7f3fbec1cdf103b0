"""``python -m tablesafe.cli``: the same as the ``tablesafe`` command."""

from tablesafe.cli.main import app

app()
