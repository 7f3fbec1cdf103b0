"""Certificates of a pattern from the attacker's solutions: for each sensitive cell and
direction, a table the attacker cannot exclude that moves the cell by its level."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tablesafe.problem import Problem
from tablesafe.suppress.attacker import UP, Attack, Bounds
from tablesafe.suppress.protection import Key


def certificates_frame(problem: Problem, bounds: Bounds, atts: dict[Key, Attack]) -> pd.DataFrame:
    """Certificates (target, direction, cell, value) from outsider attacks.

    Each attacker solution is scaled to move the target by exactly its level (the scaled
    table stays feasible: the deviation bounds contain zero).
    """
    rows_t, rows_d, rows_c, rows_v = [], [], [], []
    for (k, d, s), a in sorted(atts.items()):
        if s >= 0 or a.required <= 0 or len(a.cells) == 0:
            continue
        scale = 1.0
        moved = abs(float(a.dev[a.cells == k].sum()))
        if moved > a.required:
            scale = a.required / moved
        dev = a.dev * scale
        keep = np.abs(dev) > 0
        vals = problem.value[a.cells[keep]] + dev[keep]
        rows_t += [problem.names[k]] * int(keep.sum())
        rows_d += ["up" if d == UP else "down"] * int(keep.sum())
        rows_c += list(problem.names[a.cells[keep]])
        rows_v += list(vals)
    return pd.DataFrame({"target": rows_t, "direction": rows_d, "cell": rows_c, "value": np.asarray(rows_v, float)})
