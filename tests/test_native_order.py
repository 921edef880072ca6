"""The native order statistics of fixed-count windows (csrc/order.cc: sorted blocks for most
window sizes, the double heap for the others) against NumPy, window by window: the median and
the q-quantile are exact order statistics of each window's own points, so they equal
``np.median`` / ``np.quantile`` of that window (ties, NaN runs, infinities, signed zeros,
windows longer than the data, the ends cut short, ``center``, ``min_periods``).
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxsubset
from jaxsubset import window_statistic
from references import FLOAT, X64


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
# the window sizes drawn: the heap's (below 64) and the sorted blocks' (64 and up, sorted by
# radix), windows longer than the data
WIDTHS = (1, 2, 3, 4, 15, 40, 63, 64, 65, 130, 299, 301)
N = 300
DTYPES = ("float32", "float64") if X64 else ("float32",)
# a few values drawn often (ties, signed zeros, infinities), NaN runs, the rest random
SPECIAL = (0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan)


def _windows(n: int, w: int, center: bool):
    lead = (w - 1) // 2 if center else 0
    for k in range(n):
        yield max(k + lead - w + 1, 0), min(k + lead + 1, n)


def _expected(y, w, center, mp, policy, q):
    out = np.full(y.shape, np.nan)
    for k, (s, e) in enumerate(_windows(len(y), w, center)):
        win = y[s:e].astype(np.float64)
        ok = win[~np.isnan(win)]
        if len(ok) < max(mp, 1) or (policy == "propagate" and len(ok) < len(win)):
            continue
        # NumPy in the window's own dtype: its middle values and their lerp rounded as the
        # native road rounds them
        ok = ok.astype(y.dtype)
        with np.errstate(invalid="ignore"):  # -inf and inf in the middle: NaN, as natively
            out[k] = np.median(ok) if q is None else _quantile(ok, q)
    return out.astype(y.dtype)


def _quantile(ok, q):
    """NumPy's linear quantile with the virtual index in the values' dtype (as the reference
    road computes it in float32); for float64 exactly ``np.quantile``."""
    t = ok.dtype.type
    v = np.sort(ok)
    h = t(len(v) - 1) * t(q)
    lo = int(np.floor(h))
    a, b, g = v[lo], v[min(lo + 1, len(v) - 1)], h - t(lo)
    d = b - a
    got = b - d * (t(1) - g) if g >= 0.5 else a + d * g  # NumPy's _lerp
    if ok.dtype == np.float64:
        want = np.quantile(ok, q)
        assert got == want or (np.isnan(got) and np.isnan(want)), (got, want)
    return got


@st.composite
def _values(draw, dtype):
    n = draw(st.sampled_from((1, 7, N)))
    kind = draw(st.sampled_from(("normal", "ties", "special")))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "normal":
        y = rng.normal(0.0, 10.0, n)
    elif kind == "ties":
        y = rng.integers(-3, 4, n).astype(np.float64)
    else:
        y = rng.choice(np.array(SPECIAL), n, p=[0.2, 0.2, 0.15, 0.15, 0.1, 0.1, 0.1])
        y = np.where(rng.random(n) < 0.3, rng.normal(0.0, 1.0, n), y)
    if draw(st.booleans()) and n > 10:  # a NaN run, longer than some windows
        s = draw(st.integers(0, n - 1))
        y[s : s + draw(st.integers(1, 80))] = np.nan
    return y.astype(dtype)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_window_median_and_quantile_equal_numpy(data):
    dtype = data.draw(st.sampled_from(DTYPES))
    y = data.draw(_values(dtype))
    w = data.draw(st.sampled_from(WIDTHS))
    center = data.draw(st.booleans())
    policy = data.draw(st.sampled_from(("omit", "propagate")))
    mp = data.draw(st.sampled_from((0, 1, w // 2 + 1, w)))
    q = data.draw(st.sampled_from((None, 0.0, 0.3, 0.5, 0.9, 1.0)))
    kw = dict(min_periods=mp, nan_policy=policy, center=center, method="native")
    if q is None:
        got = window_statistic(y, w, "median", **kw)
    else:
        got = window_statistic(y, w, "quantile", q=q, **kw)
    got = np.asarray(got)
    assert got.dtype == y.dtype
    # equal values compare equal: -0.0 and 0.0 tie, either may be read
    np.testing.assert_array_equal(got, _expected(y, w, center, mp, policy, q))


@pytest.mark.parametrize("w", [64, 100, 1000])
@pytest.mark.parametrize("dtype", DTYPES)
def test_long_data_over_many_blocks_equals_numpy(w, dtype):
    # several thousand blocks' hand-overs, blocks sorted by radix, every window full
    rng = np.random.default_rng(w)
    y = rng.normal(0.0, 1.0, 40 * w + 17)
    y[rng.random(len(y)) < 0.01] = np.nan
    y[::97] = 0.5  # ties across blocks
    y = y.astype(dtype)
    got = np.asarray(window_statistic(y, w, "median", method="native"))
    want = _expected(y, w, False, 1, "omit", None)
    np.testing.assert_array_equal(got, want)
    if w == 100:  # against bottleneck's move_median too (its own heap)
        bn = pytest.importorskip("bottleneck")
        full = bn.move_median(y.astype(np.float64), w, min_count=1)
        np.testing.assert_array_equal(got.astype(np.float64)[w:], full[w:].astype(dtype))


def test_two_channels_centred_windows():
    # channels walked one after another, the same blocks rebuilt per channel
    rng = np.random.default_rng(3)
    y = rng.normal(0.0, 1.0, (500, 2)).astype(FLOAT)
    y[100:140, 1] = np.nan
    got = window_statistic(y, 70, ("median", "count"), method="native", center=True)
    for c in range(2):
        want = _expected(y[:, c], 70, True, 1, "omit", None)
        np.testing.assert_array_equal(np.asarray(got["median"])[:, c], want)


def test_integer_values_are_ranked_as_the_float_result():
    # integers are converted to the result's float dtype first, then ranked: many ties
    y = np.random.default_rng(5).integers(-50, 50, 3000).astype(np.int32)
    got = np.asarray(window_statistic(y, 100, "median", method="native"))
    assert got.dtype == FLOAT
    np.testing.assert_array_equal(got, _expected(y.astype(FLOAT), 100, False, 1, "omit", None))


@pytest.mark.parametrize("q", [None, 0.25])
def test_signed_zeros_as_the_reference_road(q):
    # the blocks rank ties as a stable sort does (as the reference road sorts a window), so
    # even the sign of a zero read is the reference's (np.median's partition has no such
    # order: it is compared by value above)
    rng = np.random.default_rng(11)
    y = np.where(rng.random(400) < 0.5, -0.0, 0.0)
    y[rng.random(400) < 0.2] = 1.0
    y[rng.random(400) < 0.05] = np.nan
    y = y.astype(FLOAT)
    kw = dict(center=True) if q is None else dict(q=q)
    stat = "median" if q is None else "quantile"
    nat = np.asarray(window_statistic(y, 70, stat, method="native", **kw))
    ref = np.asarray(window_statistic(y, 70, stat, method="reference", capacity=128, **kw))
    np.testing.assert_array_equal(nat, ref)
    np.testing.assert_array_equal(np.signbit(nat), np.signbit(ref))
