"""Input loading for a protection run: the data (a path checked and, for JJ and
tau-ARGUS microdata, read; frames passed through) and the manual status file, each
checked where it enters, with errors naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tablesafe.errors import InputError
from tablesafe.io.frames import check_input_file
from tablesafe.io.jj import check_additive, read_jj, with_offsets
from tablesafe.io.tauargus import read_asc
from tablesafe.problem import Problem


def read_manual(path: str | Path) -> pd.DataFrame:
    """Manual statuses from a CSV file: the dimension codes (or ``name``), ``status``
    (A sensitive by hand, P protected) and optionally ``margin`` (percent).

    The file is checked here (status column and letters, numeric margins), each error
    naming the file and line; its name is kept in ``frame.attrs["file"]`` so that the
    rules stage can name it for cells the table does not have.
    """
    name = str(path)
    check_input_file(path, "manual status file")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, OSError) as exc:
        raise InputError(f"cannot read manual statuses: {exc}", file=name) from None
    if "status" not in frame.columns:
        raise InputError("manual statuses need a 'status' column (A = sensitive by hand, P = protected)", file=name)
    st = frame["status"].astype(str).str.strip().str.upper()
    bad = np.flatnonzero(~st.isin(["A", "U", "P"]).to_numpy())
    if len(bad):
        raise InputError("manual status must be A (sensitive by hand) or P (protected)", file=name,
                         line=int(bad[0]) + 2, column="status", code=str(frame["status"].iloc[bad[0]]))
    if "margin" in frame.columns:
        margin = pd.to_numeric(frame["margin"].replace("", None), errors="coerce")
        bad = np.flatnonzero((margin.isna() & (frame["margin"].str.strip() != "")).to_numpy())
        if len(bad):
            raise InputError("non-numeric margin", file=name, line=int(bad[0]) + 2, column="margin",
                             code=str(frame["margin"].iloc[bad[0]]))
        frame["margin"] = margin.astype(float)
    frame.attrs["file"] = name
    return frame


def load_data(data: Any, metadata: str | Path | None) -> Any:
    """Pass frames through (polars/pyarrow as they are); check paths; read JJ and .asc."""
    if isinstance(data, (str, Path)):
        path = check_input_file(data)
        if path.suffix.lower() == ".jj":
            return read_jj(path)
        if path.suffix.lower() == ".asc" or metadata is not None:
            if metadata is None:
                raise InputError(
                    "a tau-ARGUS .asc file needs its metadata: give the .rda file (--metadata)", file=str(path)
                )
            return read_asc(path, metadata)
        return str(path)
    return data


def read_inputs(data: Any, manual: Any, *, tabular: bool, metadata: str | Path | None, jj_offsets: bool,
                require_additive: bool) -> tuple[Any, Any]:
    """The read stage of :func:`tablesafe.api.prepare_problem`: data and manual statuses,
    checked.

    A problem (read from JJ or given) gets its offsets as right-hand sides with
    ``jj_offsets`` (for rounded values that do not add up exactly), or else must satisfy
    its relations when ``require_additive``. (``encoding``, the text encoding of a CSV
    data file, default utf-8, is passed to the tabulation.)
    """
    if not tabular:
        data = load_data(data, metadata)
    elif isinstance(data, (str, Path)):
        check_input_file(data)
    if isinstance(manual, (str, Path)):
        manual = read_manual(manual)
    if isinstance(data, Problem):
        if jj_offsets:
            data = with_offsets(data)
        elif require_additive:
            check_additive(data)
    return data, manual
