"""Properties of the location rules and of interval arithmetic (seed 004 section 3.4)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablesafe.uncertainty import Intervals, needs

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False)
nonneg = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
percent = st.floats(min_value=0.5, max_value=60.0)


@given(x=pos, half=nonneg, p=percent)
def test_theorem_3_4_symmetric_interval_sliding_equals_two_sided(x, half, p):
    """Theorem 3.4: an interval symmetric about x is sensitive under sliding protection
    exactly when it is under two-sided protection, and needs the same units."""
    ui = Intervals.of(x - half, x + half)
    nd = needs(ui, x, p)
    assert bool(nd.protected("sliding")) == bool(nd.protected("two-sided"))
    assert float(nd.sliding) == pytest.approx(float(nd.left) + float(nd.right), rel=1e-9, abs=1e-6 * max(1, x))


@given(x=pos, left=nonneg, right=nonneg, p=percent)
def test_two_sided_protection_implies_sliding(x, left, right, p):
    """Two-sided protection is the stronger rule: whatever the asymmetry, an interval
    protected on both sides is wide enough for sliding protection."""
    nd = needs(Intervals.of(x - left, x + right), x, p)
    if bool(nd.protected("two-sided")):
        assert bool(nd.protected("sliding"))


@given(a=st.tuples(nonneg, nonneg), b=st.tuples(nonneg, nonneg), t=st.floats(0, 1), u=st.floats(0, 1))
def test_difference_holds_every_difference_of_members(a, b, t, u):
    """[a] - [b] contains every difference of members, and its ends are reached."""
    ia = Intervals.of(min(a), max(a))
    ib = Intervals.of(min(b), max(b))
    d = ia - ib
    xa = min(a) + t * (max(a) - min(a))
    xb = min(b) + u * (max(b) - min(b))
    assert bool(d.contains(xa - xb))
    assert float(d.low) == pytest.approx(min(a) - max(b)) and float(d.high) == pytest.approx(max(a) - min(b))


def test_division_by_an_unknown_weight():
    """A weighted contribution within [60, 120] and a weight within [1, 3]: x within [20, 120]."""
    assert (Intervals.of(60, 120).divided_by(Intervals.of(1, 3))).pairs() == [(20.0, 120.0)]
    with pytest.raises(ValueError):
        Intervals.of(1, 2).divided_by(Intervals.of(0, 1))


def test_vectorised_intervals_keep_their_shape():
    ui = Intervals.of(np.array([1.0, 2.0]), np.array([3.0, 5.0])) - np.array([1.0, 1.0])
    assert ui.pairs() == [(0.0, 2.0), (1.0, 4.0)]
    assert len(ui) == 2 and ui[1].pairs() == [(1.0, 4.0)]
    with pytest.raises(ValueError):
        Intervals.of(2.0, 1.0)
