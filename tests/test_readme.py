"""The README a newcomer starts from (issue 13, item 8): it names only files the repository
has, documents the options a first real run needs (linked tables, the weight mode and
its default, costs, markers, waivers and requests, time limits, JJ offsets), lists every
status of the analyst file, and its examples write only where ``.gitignore`` looks away."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tablesafe.cli.main import app
from tablesafe.problem import STATUSES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FOLDERS = ("benchmarks/", "docs/", "examples/", "src/", "tests/")


def test_readme_names_only_files_of_the_repository():
    quoted = re.findall(r"[`(]([\w./-]+)[`)]", README)
    paths = [q for q in quoted if q.startswith(FOLDERS)]
    assert paths, "the README names no file of the repository"
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"the README names files the repository lacks: {missing}"
    assert "DESIGN.md" not in README
    assert "(docs/architecture.md)" in README


@pytest.mark.parametrize("option", ["--table", "--weight-mode", "--cost", "--marker", "--empty-marker",
                                    "--waiver", "--request", "--time-limit", "--jj-offsets", "--encoding"])
def test_readme_documents_the_options_of_a_first_real_run(option):
    help_text = CliRunner().invoke(app, ["protect", "--help"], terminal_width=240).output
    assert re.search(rf"{option}\b", help_text), f"{option} is no option of protect"
    assert re.search(rf"`{option}\b", README), f"the README does not document {option}"


def test_readme_gives_the_weight_mode_default():
    text = README[README.index("`--weight-mode`"):][:400]
    assert "default" in text and "`sample`" in text


def test_readme_lists_every_status_of_the_analyst_file():
    row = next(ln for ln in README.splitlines() if ln.startswith("| `cells.csv`"))
    statuses = re.search(r"status \(([^)]*)\)", row)
    assert statuses is not None
    letters = {part.split()[0] for part in statuses.group(1).split(",")}
    assert letters == set(STATUSES)


def _ignored(path: str, patterns: list[str]) -> bool:
    parts = Path(path).parts
    for pat in patterns:
        folder = pat.endswith("/")
        pat = pat.strip("/")
        candidates = parts[:-1] if folder else parts
        if any(fnmatch.fnmatch(p, pat) for p in candidates) or fnmatch.fnmatch(path, pat):
            return True
    return False


def test_readme_examples_write_only_ignored_files():
    patterns = [ln.strip() for ln in (ROOT / ".gitignore").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
    blocks = re.findall(r"```(?:python)?\n(.*?)```", README, flags=re.S)
    written = []
    for block in blocks:
        written += re.findall(r"--(?:out|cells|report|certificates)\s+(\S+)", block)
        written += re.findall(r"\b(?:out|cells|report)=\"([^\"]+)\"", block)
    assert len(written) >= 6, written
    loose = [w for w in written if not _ignored(w, patterns)]
    assert not loose, f"README examples write files .gitignore does not cover: {loose}"


def test_readme_names_the_castro_files_that_need_offsets(benchmarks_dir):
    """The Castro files the README says need --jj-offsets are refused without it and read
    with it."""
    from tablesafe.errors import NonAdditiveError
    from tablesafe.io.inputs import read_inputs

    text = README[README.index("Castro's JJ test files"):][:300]
    named = re.findall(r"`([A-Z0-9]+)`", text)
    assert "TABLE7" in named
    for name in named:
        jj = benchmarks_dir / "castro" / f"{name}.jj"
        with pytest.raises(NonAdditiveError):
            read_inputs(jj, None, tabular=False, metadata=None, jj_offsets=False, require_additive=True)
        read_inputs(jj, None, tabular=False, metadata=None, jj_offsets=True, require_additive=True)
