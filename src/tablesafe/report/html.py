"""Build the report's figures (matplotlib, base64 PNG) and render the jinja2 template."""

from __future__ import annotations

import html
from itertools import combinations
from typing import Any

import numpy as np

from tablesafe.audit import findings_in_words, verdict_line
from tablesafe.problem import EMPTY, MANUAL, PRIMARY, PROTECTED, SAFE, SECONDARY
from tablesafe.report.adjustment import adjustment_section
from tablesafe.report.contributions import contributions_section
from tablesafe.report.figures import png, pyplot
from tablesafe.report.noise import noise_section
from tablesafe.report.published_intervals import intervals_section
from tablesafe.version import __version__

#: Status letters, their names in the report, and colours (colour-blind friendly).
STATUS_STYLE = {
    SAFE: ("safe", "#e8eef4"),
    PRIMARY: ("primary (rule)", "#c0392b"),
    MANUAL: ("primary (by hand)", "#8e44ad"),
    SECONDARY: ("secondary", "#e67e22"),
    PROTECTED: ("protected", "#2e86c1"),
    EMPTY: ("empty", "#ffffff"),
}
MAX_HEATMAP_CELLS = 4000
MAX_INTERVAL_CELLS = 60


def heatmaps(result: Any) -> list[dict]:
    """One heat map per pair of dimensions (other dimensions at their totals).

    Colours show the final status; values are printed in cells when the view is small;
    withheld cells show their true value in the analyst report (it is confidential).
    """
    problem = result.problem
    model = problem.model
    if model is None or problem.codes is None or len(model.dims) < 1:
        return []
    plt = pyplot()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    letters = list(STATUS_STYLE)
    cmap = ListedColormap([STATUS_STYLE[s][1] for s in letters])
    status_idx = {s: i for i, s in enumerate(letters)}
    codes = problem.codes.astype(str)
    dims = list(model.dims)
    pairs = list(combinations(range(len(dims)), 2)) if len(dims) >= 2 else [(0, None)]
    out = []
    for a, b in pairs[:6]:
        da = dims[a]
        db = dims[b] if b is not None else None
        mask = np.ones(problem.n, dtype=bool)
        for k, d in enumerate(dims):
            if k not in (a, b):
                mask &= (codes[d.name] == d.total).to_numpy()
        rows_codes = list(da.hierarchy.codes)
        cols_codes = list(db.hierarchy.codes) if db is not None else [problem.response or "value"]
        if len(rows_codes) * len(cols_codes) > MAX_HEATMAP_CELLS:
            out.append(
                {
                    "title": f"{da.name} × {db.name if db else ''}",
                    "note": f"view too large to draw ({len(rows_codes)} × {len(cols_codes)} cells)",
                    "img": None,
                }
            )
            continue
        ri = {c: i for i, c in enumerate(rows_codes)}
        ci = {c: i for i, c in enumerate(cols_codes)}
        grid = np.full((len(rows_codes), len(cols_codes)), status_idx[EMPTY], dtype=float)
        vals = np.full(grid.shape, np.nan)
        sel = np.flatnonzero(mask)
        rr = codes[da.name].to_numpy()[sel]
        cc = codes[db.name].to_numpy()[sel] if db is not None else np.array([cols_codes[0]] * len(sel))
        for k, i in enumerate(sel):
            r, c = ri.get(rr[k]), ci.get(cc[k])
            if r is None or c is None:
                continue
            grid[r, c] = status_idx.get(result.status[i], 0)
            vals[r, c] = problem.value[i]
        depth_r = dict(zip(da.hierarchy.codes, da.hierarchy.depths))
        rlabels = ["  " * int(depth_r[c]) + c for c in rows_codes]
        if db is not None:
            clabels = list(cols_codes)
        else:
            clabels = cols_codes
        h = max(2.5, 0.28 * len(rows_codes) + 1.2)
        w = max(4.0, 0.75 * len(cols_codes) + 2.5)
        fig, ax = plt.subplots(figsize=(min(w, 16), min(h, 40)))
        ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=len(letters) - 0.5, aspect="auto", interpolation="nearest")
        ax.set_xticks(range(len(cols_codes)), clabels, rotation=60 if len(cols_codes) > 6 else 0, ha="right" if len(cols_codes) > 6 else "center", fontsize=8)
        ax.set_yticks(range(len(rows_codes)), rlabels, fontsize=8)
        ax.set_xticks(np.arange(-0.5, len(cols_codes)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(rows_codes)), minor=True)
        ax.grid(which="minor", color="#b0b8c0", linewidth=0.5)
        ax.tick_params(which="minor", length=0)
        if len(rows_codes) * len(cols_codes) <= 600:
            for r in range(grid.shape[0]):
                for c in range(grid.shape[1]):
                    v = vals[r, c]
                    if not np.isnan(v):
                        dark = letters[int(grid[r, c])] in (PRIMARY, MANUAL, PROTECTED)
                        ax.text(c, r, f"{v:,.0f}", ha="center", va="center", fontsize=6.5, color="white" if dark else "#222")
        ax.set_ylabel(da.name)
        if db is not None:
            ax.set_xlabel(db.name)
        present = sorted({int(x) for x in grid.ravel()})
        ax.legend(
            handles=[Patch(facecolor=STATUS_STYLE[letters[i]][1], edgecolor="#888", label=STATUS_STYLE[letters[i]][0]) for i in present],
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            fontsize=8,
            frameon=False,
        )
        others = [d.name for k, d in enumerate(dims) if k not in (a, b)]
        title = f"{da.name} × {db.name}" if db is not None else da.name
        note = ("other dimensions at their totals: " + ", ".join(others)) if others else ""
        out.append({"title": title, "note": note, "img": png(fig)})
    return out


def interval_plot(result: Any) -> dict | None:
    """Audit interval of each sensitive cell against its required range, relative to the
    cell value (percent). Shows up to :data:`MAX_INTERVAL_CELLS` cells, largest first."""
    audit = result.audit
    problem = result.problem
    sens = problem.sensitive
    if audit is None or not sens.any():
        return None
    plt = pyplot()
    idx = np.flatnonzero(sens)
    idx = idx[np.argsort(-np.abs(problem.value[idx]), kind="stable")][:MAX_INTERVAL_CELLS]
    v = problem.value[idx]
    scale = np.where(np.abs(v) > 0, np.abs(v), 1.0)
    req_lo = -problem.lpl[idx] / scale * 100
    req_hi = problem.upl[idx] / scale * 100
    lo = (np.asarray(audit.lower, dtype=float)[idx] - v) / scale * 100
    hi = (np.asarray(audit.upper, dtype=float)[idx] - v) / scale * 100
    verdict = np.asarray(audit.verdict, dtype=object)[idx].astype(str)
    finite = np.concatenate([req_lo, req_hi, lo[np.isfinite(lo)], hi[np.isfinite(hi)]])
    cap = max(float(np.nanmax(np.abs(finite))) * 1.15 if finite.size else 100.0, 10.0)
    cap = min(cap, 1000.0)
    hi_c = np.where(np.isfinite(hi), np.minimum(hi, cap), cap)
    lo_c = np.where(np.isfinite(lo), np.maximum(lo, -cap), -cap)
    fig, ax = plt.subplots(figsize=(9, max(2.2, 0.3 * len(idx) + 1.0)))
    y = np.arange(len(idx))
    ax.barh(y, req_hi - req_lo, left=req_lo, height=0.7, color="#d5dbe1", label="required range (value − LPL … value + UPL)")
    ok = verdict == "protected"
    if ok.any():
        ax.hlines(y[ok], lo_c[ok], hi_c[ok], color="#1e8449", linewidth=2.5, label="audit interval (protected)")
    if (~ok).any():
        ax.hlines(y[~ok], lo_c[~ok], hi_c[~ok], color="#c0392b", linewidth=2.5, label="audit interval (NOT protected)")
    point = np.isclose(lo_c, hi_c, atol=1e-9 * cap)
    if point.any():
        ax.plot(lo_c[point], y[point], marker="D", linestyle="none", color="#c0392b", markersize=5,
                label="exactly recalculable")
    ends = ~point
    ax.plot(lo_c[ends], y[ends], marker="|", linestyle="none", color="#333", markersize=9)
    ax.plot(hi_c[ends], y[ends], marker="|", linestyle="none", color="#333", markersize=9)
    unb = ~np.isfinite(hi) | (hi > cap)
    if unb.any():
        ax.plot(np.full(unb.sum(), cap), y[unb], marker=">", linestyle="none", color="#555", markersize=5, label="interval continues")
    ax.axvline(0, color="#333", linewidth=0.8)
    names = [str(n) for n in problem.names[idx]]
    ax.set_yticks(y, names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("distance from the cell value, % of the value")
    ax.set_xlim(-cap * 1.05 if lo_c.min() < 0 or req_lo.min() < 0 else -5, cap * 1.05)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=8, frameon=False)
    note = "" if sens.sum() <= MAX_INTERVAL_CELLS else f"the {MAX_INTERVAL_CELLS} largest of {int(sens.sum())} sensitive cells"
    return {"img": png(fig), "note": note}


def timing_plot(timings: dict[str, float]) -> str | None:
    """Horizontal bar chart of seconds per stage."""
    if not timings:
        return None
    plt = pyplot()
    names = list(timings)
    secs = [timings[k] for k in names]
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(names) + 0.8))
    ax.barh(range(len(names)), secs, color="#5d6d7e")
    ax.set_yticks(range(len(names)), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds")
    for i, s in enumerate(secs):
        ax.text(s, i, f" {s:.2f}", va="center", fontsize=8)
    return png(fig)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.2f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v) if v else "—"
    return str(v)


def render_report(result: Any) -> str:
    """Render the HTML report of a :class:`~tablesafe.api.ProtectResult` as a string."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("tablesafe.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
    )
    env.filters["num"] = lambda v, d=2: f"{v:,.{d}f}"
    template = env.get_template("report.html.j2")
    counts = result.counts
    status_rows = [
        {"letter": s, "name": STATUS_STYLE[s][0], "colour": STATUS_STYLE[s][1], "n": counts.get(s, 0)}
        for s in STATUS_STYLE
    ]
    loss = result.information_loss
    overall = loss.iloc[0].to_dict()
    levels = loss.iloc[1:].to_dict("records")
    params = {k: _fmt(v) for k, v in result.parameters().items()}
    audit_line = None
    findings = ""
    if result.audit is not None:
        audit_line = verdict_line(result.audit)
        findings = "; ".join(findings_in_words(result.audit))
    dims = list(result.problem.codes.columns) if result.problem.codes is not None else []
    return template.render(
        version=__version__,
        response=result.response,
        method=result.method_text,
        n_cells=result.problem.n,
        n_relations=result.problem.m,
        dims=dims,
        params=params,
        steps=result.suppression_steps() if result.adjustment is None else {},
        status_rows=status_rows,
        overall=overall,
        levels=levels,
        heatmaps=heatmaps(result),
        intervals=interval_plot(result),
        audit_line=audit_line,
        findings=findings,
        audit_ok=result.ok,
        timings=result.timings,
        timing_img=timing_plot(result.timings),
        adjustment=adjustment_section(result),
        published=intervals_section(result),
        contributions=contributions_section(result),
        noise=noise_section(result),
        total_time=sum(result.timings.values()),
        escape=html.escape,
    )
