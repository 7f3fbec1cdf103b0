"""Generated tables shared by the adjustment tests."""

from __future__ import annotations

import pytest

from tablesafe.problem import Problem


@pytest.fixture(scope="session")
def problem_1k() -> Problem:
    from tablesafe.synthetic import synthetic_problem

    return synthetic_problem("1k")


@pytest.fixture(scope="session")
def problem_1k3d() -> Problem:
    from tablesafe.synthetic import synthetic_problem

    return synthetic_problem("1k3d")
