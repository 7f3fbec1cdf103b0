"""tablesafe's LPs run whatever HiGHS models the caller's process ran before.

HiGHS keeps one thread scheduler per process, set up by the first model that runs; a
model asking for other threads then does not run (model status 'Not Set'), in that
process and in the workers it forks. Each case runs in a fresh interpreter whose first
HiGHS model is a caller's, with HiGHS's default threads, as a script that solves its own
LP before calling tablesafe would (seen in a benchmark's process: every attacker LP of
``fast``'s forked groups came back 'Not Set' and all 2,467 sensitive cells of Castro's
CBS were reported impossible to protect)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

CALLER_FIRST = """
import sys
sys.path.insert(0, {src!r})
import highspy
import numpy as np

def solve(h):
    inf = highspy.kHighsInf
    h.passModel(2, 1, 2, int(highspy.MatrixFormat.kColwise), int(highspy.ObjSense.kMinimize), 0.0,
                np.array([1.0, 2.0]), np.zeros(2), np.array([inf, inf]), np.array([1.0]), np.array([1.0]),
                np.array([0, 1, 2], dtype=np.int32), np.array([0, 0], dtype=np.int32), np.array([1.0, 1.0]),
                np.zeros(2, dtype=np.int32))
    h.run()
    return h.getModelStatus() == highspy.HighsModelStatus.kOptimal

caller = highspy.Highs()
caller.setOptionValue("output_flag", False)
assert solve(caller)  # the caller's own model, HiGHS's default threads
"""


def _run(body: str) -> str:
    script = textwrap.dedent(CALLER_FIRST).format(src=str(SRC)) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_tablesafe_models_run_after_a_callers_model_in_the_process_and_its_forked_workers() -> None:
    out = _run("""
        from tablesafe.audit.lp import new_highs
        from tablesafe.parallel import map_forked

        def child(_):
            return solve(new_highs())

        print("parent", solve(new_highs()))
        print("children", map_forked(child, [0, 1], 2))
        print("caller again", solve(caller))
        """)
    assert "parent True" in out
    assert "children [True, True]" in out
    assert "caller again True" in out


def test_fast_groups_in_forked_workers_after_a_callers_model_give_the_clean_pattern() -> None:
    """``fast`` with two groups on two workers (forked) after the caller's model: the
    same pattern and certificates as in a process that ran no other model."""
    body = """
        import hashlib
        from tablesafe.suppress.fast import fast_pattern
        from tablesafe.suppress.fast_options import FastOptions
        from tablesafe.synthetic import problem_from_data, synthetic_data

        problem = problem_from_data(synthetic_data([[3, 10], [2, 3, 4]], 3000, seed=11))
        pat = fast_pattern(problem, options=FastOptions(parallel_from=50), workers=2)
        print("workers", pat.stats["workers"])
        print("pattern", hashlib.sha1(pat.withheld.tobytes()).hexdigest())
        """
    after_caller = _run(body)
    clean = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(SRC)!r})\n"
                            + textwrap.dedent(body)], capture_output=True, text=True, timeout=300)
    assert clean.returncode == 0, clean.stderr[-2000:]
    assert "workers 2" in after_caller
    assert after_caller.splitlines()[-1] == clean.stdout.splitlines()[-1]
