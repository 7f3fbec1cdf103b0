"""The report's section on interval publication: how wide the published intervals are
(relative to the cells' values, per kind of cell) and the narrowest intervals of
sensitive cells with the widths their protection levels ask for."""

from __future__ import annotations

from typing import Any

import numpy as np

NARROWEST_SHOWN = 15
"""How many sensitive cells (narrowest interval first) the section lists."""


def _percent(x: float) -> str:
    return "∞" if not np.isfinite(x) else f"{100 * x:,.1f}"


def intervals_section(result: Any) -> dict | None:
    """What the template's interval section shows, or None for other methods."""
    iv = getattr(result, "intervals", None)
    if iv is None:
        return None
    problem = result.problem
    w = iv.withheld
    rel = iv.widths(problem.value)
    sens = problem.sensitive
    rows = []
    for name, mask in (("sensitive", w & sens), ("other withheld", w & ~sens)):
        r = rel[mask]
        fin = r[np.isfinite(r)]
        rows.append({"group": name, "cells": int(mask.sum()),
                     "median": _percent(float(np.median(fin))) if fin.size else "—",
                     "p10": _percent(float(np.quantile(fin, 0.1))) if fin.size else "—",
                     "min": _percent(float(fin.min())) if fin.size else "—"})
    idx = np.flatnonzero(w & sens)
    order = idx[np.argsort(rel[idx], kind="stable")][:NARROWEST_SHOWN]
    v = np.asarray(problem.value, dtype=float)
    narrowest = [{"cell": str(problem.names[k]), "value": float(v[k]), "low": float(iv.low[k]),
                  "high": float(iv.high[k]), "needed_low": float(max(v[k] - problem.lpl[k], problem.lower[k])),
                  "needed_high": float(v[k] + problem.upl[k])} for k in order.tolist()]
    return {"base": f"{iv.base:g}", "cells": int(w.sum()), "rows": rows, "narrowest": narrowest}
