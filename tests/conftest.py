"""Shared test fixtures: where the read-only benchmark data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _find_shared() -> Path | None:
    env = os.environ.get("TABLESAFE_SHARED")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        cand = parent / "shared" / "benchmarks"
        if cand.is_dir():
            return parent / "shared"
    return None


SHARED: Path | None = _find_shared()
"""The shared folder (seeds and benchmark data) beside the checkout, if present."""


@pytest.fixture(scope="session")
def benchmarks_dir() -> Path:
    """``shared/benchmarks``; tests that need it skip when the folder is absent."""
    if SHARED is None:
        pytest.skip("shared/benchmarks not found (set TABLESAFE_SHARED)")
    return SHARED / "benchmarks"
