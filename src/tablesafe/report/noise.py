"""The report's section on noise added to the microdata: the noise's settings
(confidential), how many cells were published, their relative errors (a histogram), and
the sensitive cells the noise protected."""

from __future__ import annotations

from typing import Any

import numpy as np

from tablesafe.noise import published_errors
from tablesafe.report.figures import png, pyplot


def _histogram(rel_published: np.ndarray, percent: float) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    ax.hist(100 * rel_published, bins=40, color="#4c72b0")
    ax.axvline(percent, color="grey", lw=1, ls="--")
    ax.set_xlabel("relative change of a published cell, % (dashed: the noise percentage)")
    ax.set_ylabel("cells")
    return png(fig)


def noise_section(result: Any) -> dict | None:
    """What the template's noise section shows, or None for other methods."""
    nz = getattr(result, "noise", None)
    if nz is None:
        return None
    st = nz.stats
    rel = published_errors(nz.true, nz.noisy, result.withheld)
    rows = [("noise percentage (confidential)", f"{nz.options.percent:g} %"),
            ("spread of the multiplier sizes (confidential)", f"± {nz.options.spread:g} %"),
            ("seed (confidential)", str(nz.options.seed)),
            ("cells published with noisy values", f"{st['published']:,} of {st['cells']:,} "
                                                  f"({100 * st['published_share']:.1f} %)"),
            ("mean relative error of published cells", f"{100 * st['mean_relative_error']:.2f} %"),
            ("largest relative error of a published cell", f"{100 * st['largest_relative_error']:.2f} %"),
            ("sensitive cells protected by their noise", f"{st['sensitive_published_by_noise']:,} of "
                                                        f"{st['sensitive']:,}"),
            ("cells withheld (sensitive cells the noise leaves short, and complements)", f"{st['withheld']:,}")]
    return {"rows": rows, "img": _histogram(rel, nz.options.percent) if rel.size else None}
