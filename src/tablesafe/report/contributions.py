"""The report's section on the contribution-level audit (seed 004): what the best-informed
respondents can deduce about each sensitive cell's largest contribution, with a plot of
the left and right sub-intervals relative to it and the most exposed cells in a table."""

from __future__ import annotations

from typing import Any

import numpy as np

from tablesafe.report.figures import png, pyplot

MOST_EXPOSED_SHOWN = 15
"""How many cells (most exposed first) the section's table lists."""


def _plot(worst, p: float) -> str:
    """Each audited cell as a point: left against right sub-interval, in percent of x1,
    with the p% lines; points below or left of them miss two-sided protection."""
    plt = pyplot()
    x1 = np.abs(worst["x1"].to_numpy(dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(x1 > 0, 100 * worst["left"].to_numpy(dtype=float) / x1, np.nan)
        right = np.where(x1 > 0, 100 * worst["right"].to_numpy(dtype=float) / x1, np.nan)
    cap = max(4 * p, 1.0)
    left, right = np.clip(left, 0, cap), np.clip(right, 0, cap)
    ok = worst["protected"].to_numpy(dtype=bool)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    ax.scatter(left[ok], right[ok], s=12, c="#4c72b0", label="protected")
    ax.scatter(left[~ok], right[~ok], s=18, c="#c44e52", marker="x", label="not protected")
    ax.axvline(p, color="grey", lw=1, ls="--")
    ax.axhline(p, color="grey", lw=1, ls="--")
    ax.set_xlabel(f"left of x1, % of x1 (capped at {cap:g})")
    ax.set_ylabel(f"right of x1, % of x1 (capped at {cap:g})")
    ax.set_title("Most exposed attacker per sensitive cell")
    ax.legend(loc="upper right", fontsize=8)
    return png(fig)


def contributions_section(result: Any) -> dict | None:
    """What the template's contribution-level section shows, or None when not asked for."""
    ca = getattr(result, "contributions", None)
    if ca is None:
        return None
    worst = ca.most_exposed()
    st = ca.stats
    rows = []
    if not worst.empty:
        need = worst["need_sliding"] if ca.side == "sliding" else np.maximum(worst["need_left"], worst["need_right"])
        order = worst.assign(_need=need).sort_values(["_need"], ascending=False, kind="stable").head(MOST_EXPOSED_SHOWN)
        rows = [{"cell": str(cell), "attacker": r.attacker, "published": r.published_as, "x1": float(r.x1),
                 "low": float(r.ui_low), "high": float(r.ui_high), "midpoint": float(r.midpoint),
                 "need_left": float(r.need_left), "need_right": float(r.need_right),
                 "need_sliding": float(r.need_sliding), "verdict": r.verdict}
                for cell, r in order.iterrows()]
    return {"p": f"{ca.p:g}", "q": f"{ca.q:g}", "side": ca.side, "knowledge": ca.knowledge.describe(),
            "coalition": ca.coalition, "attacks": st.get("rows", 0), "cells": st.get("cells", 0),
            "unprotected": st.get("unprotected_cells", 0), "midpoint": st.get("midpoint_cells", 0),
            "img": _plot(worst, ca.p) if not worst.empty else None, "rows": rows}
