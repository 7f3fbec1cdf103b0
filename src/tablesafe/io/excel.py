"""Excel output (``.xlsx``) through openpyxl: one sheet, a bold header, frozen first row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def write_excel(frame: pd.DataFrame, path: str | Path, *, sheet: str = "table") -> None:
    """Write ``frame`` to ``path`` as an Excel workbook with one sheet.

    Missing values become empty cells, so withheld cells of a publication stay blank.
    The caller is responsible for atomicity (see :func:`tablesafe.io.publication.write_frame`).
    """
    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    ws = wb.active
    ws.title = sheet[:31]
    ws.append([str(c) for c in frame.columns])
    for cell in ws[1]:
        cell.font = Font(bold=True)
    for row in frame.itertuples(index=False, name=None):
        ws.append([None if (v is pd.NA or (isinstance(v, float) and np.isnan(v))) else _plain(v) for v in row])
    ws.freeze_panes = "A2"
    for i, col in enumerate(frame.columns, start=1):
        width = max([len(str(col))] + [len(str(v)) for v in frame[col].head(200)]) + 2
        ws.column_dimensions[ws.cell(row=1, column=i).column_letter].width = min(width, 40)
    wb.save(path)


def _plain(v):
    """Convert numpy scalars to Python values openpyxl accepts."""
    if hasattr(v, "item"):
        return v.item()
    return v
