"""The HTML report: self-contained, readable in a real browser (headless Chromium)."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess

import numpy as np
import pytest
from iface_helpers import hand_audit, small_problem

from tablesafe import protect


def _result():
    r = protect(small_problem(), method="none", response="turnover")
    r = dataclasses.replace(r, audit=hand_audit(r.problem, r.withheld))
    r.timings.update({"tabulate": 0.4, "assess": 0.1, "suppress": 1.2, "audit": 0.3})
    return r


def test_report_is_self_contained_and_has_every_section(tmp_path):
    r = _result()
    path = tmp_path / "report.html"
    r.report(path)
    html = path.read_text()
    # self-contained: no external resources
    assert not re.search(r'(src|href)="(https?:|//|file:)', html)
    assert html.count("data:image/png;base64,") >= 3  # heat map, audit intervals, timings
    for section in ("CONFIDENTIAL", "Parameters", "Cells by status", "Information loss", "Tables by status",
                    "Audit of the sensitive cells", "Run time"):
        assert section in html, section
    assert "region × size" in html
    # counts by status are right
    assert re.search(r"primary \(rule\)</td><td class=\"n\">2<", html)


def test_report_on_a_problem_without_structure(tmp_path, benchmarks_dir):
    r = protect(benchmarks_dir / "castro/TARGUS.jj", method="none")
    r.report(tmp_path / "r.html")
    assert "No table structure to draw" in (tmp_path / "r.html").read_text()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="needs the Debian chromium package (.ci/run installs it)")
def test_report_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    r = _result()
    page = tmp_path / "report.html"
    r.report(page)
    flags = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        flags + [f"--screenshot={shot}", "--window-size=1200,2000", "--enable-logging=stderr", "--v=0", page.as_uri()],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert shot.exists(), proc.stderr[-2000:]
    assert "Uncaught" not in proc.stderr
    img = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert img.shape[0] >= 1000 and img.std() > 10  # not blank
    # the page's own script ran: it sets a sentinel in the DOM
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], check=False, capture_output=True, text=True, timeout=120)
    assert 'data-report="ready"' in dom.stdout
    assert "rendered with" in dom.stdout
