"""Fixtures of the rules tests; the builders live in rules_builders.py."""

from __future__ import annotations

import pytest
from rules_builders import build_cells, cells_of


@pytest.fixture
def make_cells():
    return build_cells


@pytest.fixture
def plain_cells():
    return cells_of


