"""The report's section on an adjusted table (CTA, controlled or random rounding): the
quality measures, the distribution of the deviations per kind of cell, and the adjusted
values against the true ones (a plot, and the largest sensitive cells in a table)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tablesafe.report.figures import png, pyplot

WHAT = {
    "cta": ("Controlled tabular adjustment: every sensitive cell is published moved by at least its "
            "protection level, the other cells changed as little as possible so that the table still adds up."),
    "round": "Controlled rounding: every cell published as a multiple of the base next to its value; the table adds up.",
    "random-round": ("Random rounding: every cell rounded up with probability (value mod base) / base, so the "
                     "expected published value is the true one."),
}
"""What each method did, in one sentence."""

LARGEST_SHOWN = 15
"""How many sensitive cells (largest first) the table of adjusted against true values lists."""


def _percent(x: float) -> str:
    return "∞" if not np.isfinite(x) else f"{100 * x:,.2f}"


def _groups(result: Any) -> list[tuple[str, np.ndarray]]:
    """The kinds of cell the distribution is shown for."""
    from tablesafe.adjust.totals import total_cells

    problem = result.problem
    sens = problem.sensitive
    totals = total_cells(problem)
    return [("sensitive", sens), ("other totals", totals & ~sens), ("other inner cells", ~totals & ~sens)]


def _relative(result: Any) -> np.ndarray:
    """``|adjusted - value| / |value|`` per cell (0 for unchanged zeros, inf for moved ones)."""
    adj = result.adjustment
    dev = np.abs(adj.deviation)
    v = np.abs(result.problem.value)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(v > 0, dev / np.where(v > 0, v, 1.0), np.where(dev > 0, np.inf, 0.0))
    return rel


def adjustment_section(result: Any) -> dict | None:
    """What the template's adjustment section shows, or None when the run withheld cells."""
    adj = result.adjustment
    if adj is None:
        return None
    quality = [(k, f"{v:,}" if isinstance(v, int) else (f"{v:,.4g}" if k != "seconds" else f"{v:.2f}"))
               for k, v in adj.quality.as_dict().items()]
    quality[2] = (quality[2][0], _percent(adj.quality.max_rel_change_safe) + " %")
    if adj.base is not None:
        quality.insert(0, ("rounding base", f"{adj.base:g}"))
    rel = _relative(result)
    tol = 1e-9 * max(1.0, float(np.max(np.abs(result.problem.value), initial=0.0)))
    moved = np.abs(adj.deviation) > tol
    rows = []
    for name, mask in _groups(result):
        r = rel[mask]
        rows.append({"group": name, "cells": int(mask.sum()), "changed": int((moved & mask).sum()),
                     "median": _percent(float(np.median(r))) if r.size else "—",
                     "p90": _percent(float(np.quantile(r, 0.9))) if r.size else "—",
                     "max": _percent(float(r.max())) if r.size else "—"})
    return {"method": adj.method, "what": WHAT.get(adj.method, ""), "quality": quality, "rows": rows,
            "largest": _largest(result), "img": _scatter(result, moved)}


def _largest(result: Any) -> list[dict]:
    """The largest sensitive cells with their true and adjusted values."""
    problem, adj = result.problem, result.adjustment
    idx = np.flatnonzero(problem.sensitive)
    idx = idx[np.argsort(-np.abs(problem.value[idx]), kind="stable")][:LARGEST_SHOWN]
    out = []
    for i in idx.tolist():
        v = float(problem.value[i])
        scale = abs(v) if v else 1.0
        out.append({"cell": str(problem.names[i]), "value": v, "adjusted": float(adj.values[i]),
                     "change": 100 * float(adj.deviation[i]) / scale,
                     "level": 100 * float(problem.upl[i] if adj.direction[i] >= 0 else problem.lpl[i]) / scale})
    return out


def _scatter(result: Any, moved: np.ndarray) -> str | None:
    """Adjusted against true value per cell (log scales where the values allow)."""
    problem, adj = result.problem, result.adjustment
    if not moved.any():
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 5))
    v, y = problem.value, adj.values
    sens = problem.sensitive
    ax.scatter(v[~sens], y[~sens], s=6, color="#5d6d7e", alpha=0.6, label="other cells")
    ax.scatter(v[sens], y[sens], s=12, color="#c0392b", label="sensitive cells")
    low, high = float(min(v.min(), y.min())), float(max(v.max(), y.max()))
    ax.plot([low, high], [low, high], color="#333", linewidth=0.8, label="unchanged")
    if low > 0:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("true value")
    ax.set_ylabel("published (adjusted) value")
    ax.legend(fontsize=8, frameon=False)
    return png(fig)
