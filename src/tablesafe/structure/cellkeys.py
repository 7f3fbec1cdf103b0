"""Text keys of cells: the codes of a cell joined into one string, to match the rows of a
file (a priori requests, a publication) against the cells of a table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

KEY_SEPARATOR = "\x1f"
"""Joins the codes of a key (the ASCII unit separator: no code contains it)."""


def cell_keys(frame: pd.DataFrame, dims: Sequence[str]) -> np.ndarray:
    """One text key per row: the codes of ``dims`` joined by :data:`KEY_SEPARATOR`
    (column-wise, fast for millions of cells)."""
    cols = [frame[d].astype(str) for d in dims]
    if len(cols) == 1:
        return cols[0].to_numpy(dtype=object)
    return cols[0].str.cat(cols[1:], sep=KEY_SEPARATOR).to_numpy(dtype=object)


def key_text(key: str) -> str:
    """A key as the user reads it in a message: codes joined by `` x ``."""
    return key.replace(KEY_SEPARATOR, " x ")
