"""The version of tablesafe (one place; ``tablesafe.__version__`` and the report read it)."""

__version__ = "0.1.0"
