"""Writing one subsection of benchmarks/RESULTS.md in place (shared by the benchmark scripts)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_subsection(section: str, sub: str, block: str, path: Path = RESULTS) -> None:
    """Replace subsection ``sub`` (a ``### `` heading line that starts ``block``) of
    ``section`` (a ``## `` heading) in the results file, or append it at the end of that
    section (creating the section if needed). The file is replaced atomically."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    if sub in text:
        start = text.index(sub)
        nxt = [i for i in (text.find("\n## ", start), text.find("\n### ", start + 1)) if i >= 0]
        end = min(nxt) + 1 if nxt else len(text)
        text = text[:start] + _ending(block, text[end:]) + text[end:]
    elif section in text:
        start = text.index(section)
        nxt = text.find("\n## ", start + len(section))
        end = len(text) if nxt < 0 else nxt + 1
        text = text[:end].rstrip("\n") + "\n\n" + _ending(block, text[end:]) + text[end:]
    else:
        text = text.rstrip("\n") + f"\n\n{section}\n\n" + block
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _ending(block: str, rest: str) -> str:
    """The block, followed by a blank line when a heading follows it."""
    return block.rstrip("\n") + ("\n\n" if rest else "\n")


def run_lines(heading: str, script: str, load0: tuple, load1: tuple, note: str) -> list[str]:
    """The opening lines of a subsection: its heading, the command that wrote it (this
    run's arguments) and the machine with its load at the start and the end, then ``note``."""
    import os
    import sys

    cmd = f"PYTHONPATH=src /work/benchvenv/bin/python benchmarks/{script} " + " ".join(sys.argv[1:])
    loads = ["/".join(f"{x:.1f}" for x in load) for load in (load0, load1)]
    return [heading, "", f"Command: `{cmd.strip()}`", "",
            f"Machine: {os.cpu_count()} cores; load average (1/5/15 min) {loads[0]} at the start and {loads[1]} "
            f"at the end. {note}", ""]
