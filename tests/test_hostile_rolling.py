"""Hostile differential tests of ``rolling_statistic`` against pandas and NumPy.

Every property draws tied, irregular axes, NaN and extreme values and checks the library's
rolling windows (offset, centred, fixed-count, asymmetric ``before``/``after``, ``at``
anchors) against an independent reference: pandas' ``Series.rolling`` on a
``DatetimeIndex`` of whole seconds (so the numeric axis and pandas' index are the same
points), or NumPy reductions over hand-made slices. Array lengths are fixed (one compiled
program per road and statistic tuple), so the module stays cheap in both JAX modes.
"""

import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as hst

from jaxsubset import rolling_statistic
from references import FLOAT, X64, needs_x64, tol


N = 24  # every drawn series has this length: one compiled program per road
# a static bound on the points of any window (the median's roads): one program, whatever the
# widths drawn (the default, the largest window's count, compiles one per power of two)
CAPACITY = 32
CLOSED = ("right", "left", "both", "neither")
# the statistics pandas' rolling computes, each checked on every forced road that has it
MOMENTS = ("count", "sum", "mean", "var", "std", "sem", "min", "max", "first", "last")
SHAPE = ("skew", "kurt")
# the higher moments of a few points in float32 lose digits to cancellation
SHAPE_TOL = dict(rtol=1e-7, atol=1e-9) if X64 else dict(rtol=2e-2, atol=2e-3)


def _index(x) -> pd.DatetimeIndex:
    """Whole seconds ``x`` as pandas' time index: the same points as the numeric axis."""
    return pd.DatetimeIndex(np.asarray(x, np.int64).astype("datetime64[s]").astype("M8[ns]"))


def _pandas(roll, stat: str, ddof: int, q: float = 0.5) -> np.ndarray:
    """pandas' rolling ``stat`` (``ddof`` where it applies, ``q`` for the quantile)."""
    if stat in ("var", "std", "sem"):
        return getattr(roll, stat)(ddof=ddof).to_numpy()
    if stat == "quantile":
        return roll.quantile(q).to_numpy()
    return getattr(roll, stat)().to_numpy()


def _close(got, want, err_msg: str = "", **kw) -> None:
    np.testing.assert_allclose(
        np.asarray(got, np.float64), want, equal_nan=True, err_msg=err_msg, **(kw or tol())
    )


@hst.composite
def series(draw, n: int = N, ties: bool = True):
    """``(x, y)``: int32 whole seconds (steps 0..3 with ties, or 1..3) and ``y`` of the mode's
    float with a few NaN; sometimes rounded to repeat values, sometimes a constant run."""
    steps = draw(hst.lists(hst.integers(0 if ties else 1, 3), min_size=n, max_size=n))
    x = np.cumsum(steps).astype(np.int32)
    rng = np.random.default_rng(draw(hst.integers(0, 2**16)))
    y = rng.normal(0.0, 2.0, n)
    if draw(hst.booleans()):
        y = np.round(y)  # tied values: medians, extremes and zero variances
    if draw(hst.booleans()):
        k = draw(hst.integers(0, n - 6))
        y[k : k + 6] = y[k]  # a constant run: exactly 0 variance, NaN skew/kurt
    for i in draw(hst.lists(hst.integers(0, n - 1), max_size=4)):
        y[i] = np.nan
    return x, y.astype(FLOAT)


# ------------------------------------------------------------------ offset windows vs pandas
# (method, min_periods, ddof): each a compiled program of its own, so a few fixed combinations;
# the axis, data, width, ``closed`` and ``center`` vary freely (no new program)
OFFSET_ROADS = (("auto", 1, 1), ("tree", 0, 0), ("reference", 3, 1))
OFFSET_STATS = {
    "auto": MOMENTS,
    "tree": ("count", "var", "min", "last") + SHAPE,
    "reference": ("count", "sem", "first", "median"),
}


@pytest.mark.parametrize("road", OFFSET_ROADS, ids=lambda r: r[0])
@settings(max_examples=8)
@given(
    data=series(),
    width=hst.integers(1, 12),
    closed=hst.sampled_from(CLOSED),
    center=hst.booleans(),
)
def test_offset_windows_match_pandas(road, data, width, closed, center):
    """Every folded statistic of offset (and centred) windows equals pandas', on every road.

    Ties in x (a trailing window ends at its own row), empty windows (``closed="left"`` /
    ``"neither"``), NaN skipped, ``min_periods`` (``count`` against the window's rows, as
    pandas) and ``ddof``; ``skew``/``kurt`` on the tree, the median on the reference road.
    """
    x, y = data
    method, min_periods, ddof = road
    stats = OFFSET_STATS[method]
    got = rolling_statistic(
        x, y, width, stats, closed=closed, center=center, min_periods=min_periods,
        ddof=ddof, method=method, capacity=CAPACITY,
    )  # fmt: skip
    roll = pd.Series(y.astype(np.float64), index=_index(x)).rolling(
        f"{width}s", closed=closed, center=center, min_periods=min_periods
    )
    for s in stats:
        kw = SHAPE_TOL if s in SHAPE else {}
        _close(got[s], _pandas(roll, s, ddof), f"{s} on {method}", **kw)


@pytest.mark.parametrize("road", [("wavelet", 0.1, 1), ("reference", 1.0, 2)], ids=str)
@settings(max_examples=6)
@given(
    data=series(),
    width=hst.integers(1, 12),
    closed=hst.sampled_from(CLOSED),
    center=hst.booleans(),
)
def test_offset_quantiles_match_pandas(data, width, closed, center, road):
    """Medians and linear quantiles (``q`` static: a program each) of offset windows equal
    pandas', on both order roads (``"auto"`` is the wavelet road)."""
    x, y = data
    method, q, min_periods = road
    got = rolling_statistic(
        x, y, width, ("median", "quantile"), q=q, closed=closed, center=center,
        min_periods=min_periods, method=method, capacity=CAPACITY,
    )  # fmt: skip
    roll = pd.Series(y.astype(np.float64), index=_index(x)).rolling(
        f"{width}s", closed=closed, center=center, min_periods=min_periods
    )
    _close(got["median"], roll.median().to_numpy(), f"median on {method}")
    _close(got["quantile"], roll.quantile(q).to_numpy(), f"quantile({q}) on {method}")


@pytest.mark.parametrize("road", [("auto", 1), ("reference", 3)], ids=str)
@settings(max_examples=6)
@given(
    data=series(),
    width=hst.integers(1, 12),
    closed=hst.sampled_from(CLOSED),
    seed=hst.integers(0, 2**16),
)
def test_offset_cov_corr_match_pandas(data, width, closed, road, seed):
    """``cov``/``corr`` between two channels equal pandas' pairwise ``DataFrame.rolling``:
    pairwise-complete points, ``min_periods`` counting each pair's points, ``ddof=1``."""
    x, a = data
    method, min_periods = road
    b = np.random.default_rng(seed).normal(0.0, 1.0, N).astype(FLOAT)
    b[seed % N] = np.nan  # a NaN in the other channel only: the pair's points differ
    y = np.stack([a, b + a], axis=1)
    got = rolling_statistic(
        x, y, width, ("cov", "corr"), ddof=1, closed=closed, min_periods=min_periods,
        method=method,
    )  # fmt: skip
    roll = pd.DataFrame(y.astype(np.float64), index=_index(x)).rolling(
        f"{width}s", closed=closed, min_periods=min_periods
    )
    kw = {} if X64 else dict(rtol=1e-3, atol=1e-4)  # corr of 2-3 float32 points: cancellation
    _close(got["cov"], roll.cov().to_numpy().reshape(N, 2, 2), f"cov on {method}", **kw)
    _close(got["corr"], roll.corr().to_numpy().reshape(N, 2, 2), f"corr on {method}", **kw)


# ------------------------------------------------------------- fixed-count windows vs pandas
# (method, window, min_periods, ddof, center): ``window`` and ``center`` are static too
WINDOW_ROADS = (
    ("blocks", 3, 1, 1, False),
    ("blocks", 30, 2, 0, True),  # 30 > N: every window truncated
    ("tree", 4, 3, 0, True),
    ("reference", 2, 1, 1, False),
)


@pytest.mark.parametrize("road", WINDOW_ROADS, ids=str)
@settings(max_examples=4)
@given(data=series())
def test_fixed_count_windows_match_pandas(data, road):
    """``window=w`` equals pandas' ``Series(y).rolling(w)`` (centred too) on every road."""
    _, y = data
    method, window, min_periods, ddof, center = road
    stats = {
        "blocks": MOMENTS[:8],
        "tree": ("mean", "sem", "first", "last") + SHAPE,
        "reference": ("count", "std", "max", "median"),
    }[method]
    got = rolling_statistic(
        None, y, statistic=stats, window=window, center=center, min_periods=min_periods,
        ddof=ddof, method=method,
    )  # fmt: skip
    roll = pd.Series(y.astype(np.float64)).rolling(window, center=center, min_periods=min_periods)
    for s in stats:
        kw = SHAPE_TOL if s in SHAPE else {}
        _close(got[s], _pandas(roll, s, ddof), f"{s} on {method}", **kw)


@settings(max_examples=8)
@given(data=series(ties=False), k=hst.sampled_from((1, 3)), center=hst.booleans())
def test_evenly_spaced_offset_windows_are_the_fixed_count_ones(data, k, center):
    """On evenly spaced x (a width a multiple of the step), the x-width windows (which an
    eager call reroutes to the block road) equal pandas' offset windows and the ranges' road."""
    _, y = data
    x = np.arange(N, dtype=np.int32) * 2
    stats = ("count", "mean", "std", "max")
    auto = rolling_statistic(x, y, 2 * k, stats, center=center, ddof=1)
    tree = rolling_statistic(x, y, 2 * k, stats, center=center, ddof=1, method="tree")
    roll = pd.Series(y.astype(np.float64), index=_index(x)).rolling(f"{2 * k}s", center=center)
    for s in stats:
        _close(auto[s], _pandas(roll, s, 1), s)
        _close(auto[s], tree[s], f"{s}: block road vs tree")


# ------------------------------------------------------- asymmetric windows vs NumPy slices
def _slices(x, before, after, closed, at=None):
    """The index ranges of ``before``/``after`` windows by hand, as documented in
    :func:`jaxsubset.rolling`: with ``at`` exactly ``a - before < x <= a + after`` (``closed``
    deciding each end); one window per row ends at the row itself when ``after == 0`` (at
    ``i + 1`` for a closed right end, before the first row tied with ``x[i]`` otherwise), by
    value when ``after > 0``, and never starts past its own row."""
    lo_side = "left" if closed in ("left", "both") else "right"
    hi_side = "right" if closed in ("right", "both") else "left"
    if at is not None:
        lo = np.searchsorted(x, at - before, lo_side)
        hi = np.searchsorted(x, at + after, hi_side)
        return [(int(a), int(max(a, b))) for a, b in zip(lo, hi, strict=True)]
    out = []
    for i, xi in enumerate(x):
        if after == 0:
            end = i + 1 if hi_side == "right" else int(np.searchsorted(x, xi, "left"))
        else:
            end = int(np.searchsorted(x, xi + after, hi_side))
        start = min(int(np.searchsorted(x, xi - before, lo_side)), i, end)
        out.append((start, end))
    return out


NP_FUNCS = {
    "count": lambda v: np.sum(~np.isnan(v)),
    "sum": np.nansum,
    "mean": np.nanmean,
    "var": np.nanvar,
    "min": np.nanmin,
    "max": np.nanmax,
}


@settings(max_examples=20)
@given(
    data=series(),
    before=hst.integers(0, 8),
    after=hst.integers(0, 8),
    closed=hst.sampled_from(CLOSED),
    anchors=hst.one_of(hst.none(), hst.lists(hst.integers(-3, 80), min_size=5, max_size=5)),
    half=hst.booleans(),
)
def test_asymmetric_windows_match_numpy_slices(data, before, after, closed, anchors, half):
    """``before=``/``after=`` windows (one per row, or at ``at`` anchors beyond the data and
    between points) equal NumPy reductions of the documented index slices; ``count`` and
    ``min_periods=1`` as pandas (NaN for a window with no rows, or no non-NaN point)."""
    x, y = data
    xf = x.astype(FLOAT) / 2 if half else x.astype(FLOAT)  # steps of 0.5: exact in float32
    at = None if anchors is None else np.sort(np.asarray(anchors, FLOAT)) / 2
    b, a = FLOAT(before / 2), FLOAT(after / 2)
    got = rolling_statistic(xf, y, statistic=tuple(NP_FUNCS), before=b, after=a, at=at,
                            closed=closed)  # fmt: skip
    windows = _slices(xf, b, a, closed, at)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices
        for s, f in NP_FUNCS.items():
            want = []
            for lo, hi in windows:
                v = y[lo:hi].astype(np.float64)
                empty = hi == lo if s == "count" else np.isnan(v).all()
                want.append(np.nan if empty else f(v))
            _close(got[s], np.array(want, np.float64), f"{s}: windows {windows}")


# ---------------------------------------------------------- NaN policies and infinite values
@settings(max_examples=15)
@given(data=series(), width=hst.integers(1, 8), closed=hst.sampled_from(CLOSED))
def test_propagate_is_numpys_rule_and_count_counts_rows(data, width, closed):
    """``nan_policy="propagate"``: a window holding a NaN gives NaN, ``count`` counts every
    row (pandas' rows of the window); windows without NaN equal pandas' NaN-skipping ones."""
    x, y = data
    stats = ("count", "sum", "mean", "max")
    got = rolling_statistic(x, y, width, stats, closed=closed, nan_policy="propagate")
    idx = _index(x)
    rows = pd.Series(np.ones(N), index=idx).rolling(f"{width}s", closed=closed, min_periods=0)
    n_rows = rows.sum().to_numpy()
    n_nan = (
        pd.Series(np.isnan(y).astype(float), index=idx)
        .rolling(f"{width}s", closed=closed, min_periods=0)
        .sum()
        .to_numpy()
    )
    roll = pd.Series(y.astype(np.float64), index=idx).rolling(f"{width}s", closed=closed)
    _close(got["count"], np.where(n_rows >= 1, n_rows, np.nan), "count")
    for s in stats[1:]:
        want = np.where(n_nan > 0, np.nan, _pandas(roll, s, 0))
        _close(got[s], want, s)


def test_count_min_periods_counts_rows_as_pandas():
    """``count`` compares ``min_periods`` with the window's rows, NaN included (pandas): a
    window of NaN only counts 0, an empty window (``closed="left"`` at the first row) is NaN."""
    x = np.array([0, 1, 5, 6], np.int32)
    y = np.array([np.nan, 1.0, np.nan, np.nan], FLOAT)
    got = rolling_statistic(x, y, 2, "count", closed="left")
    roll = pd.Series(y.astype(np.float64), index=_index(x)).rolling("2s", closed="left")
    _close(got, roll.count().to_numpy())
    _close(got, [np.nan, 0.0, np.nan, 0.0])


def test_nan_policy_raise_names_the_nan_eagerly():
    """``nan_policy="raise"`` refuses NaN in ``y`` eagerly with a ValueError, on both kinds of
    window, and passes NaN-free data through unchanged."""
    x = np.arange(6, dtype=np.int32)
    y = np.array([0.0, 1.0, np.nan, 3.0, 4.0, 5.0], FLOAT)
    with pytest.raises(ValueError, match="nan_policy='raise'"):
        rolling_statistic(x, y, 2, "mean", nan_policy="raise")
    with pytest.raises(ValueError, match="nan_policy='raise'"):
        rolling_statistic(None, y, statistic="mean", window=2, nan_policy="raise")
    ok = rolling_statistic(x, np.nan_to_num(y), 2, "sum", nan_policy="raise")
    _close(ok, [0.0, 1.0, 1.0, 3.0, 7.0, 9.0])


@settings(max_examples=15)
@given(
    data=series(),
    width=hst.integers(1, 8),
    where=hst.lists(hst.integers(0, N - 1), min_size=1, max_size=3),
    sign=hst.sampled_from((1.0, -1.0)),
    method=hst.sampled_from(("auto", "reference")),
)
def test_infinities_are_values_as_numpy(data, width, where, sign, method):
    """``+-inf`` in ``y`` is a value, as in NumPy (pandas' rolling reads it as missing): a
    window's sum/mean/min/max follow IEEE arithmetic, its variance is NaN, ``count`` counts
    it; windows away from it are untouched. Checked against NumPy over pandas' windows."""
    from references import pandas_rows

    x, y = data
    y = y.copy()
    y[where] = sign * np.inf
    stats = ("count", "sum", "mean", "var", "min", "max")
    got = rolling_statistic(x, y, width, stats, method=method)
    start, count = pandas_rows(x, width, "right")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for s in stats:
            f = NP_FUNCS[s]
            want = []
            for lo, k in zip(start, count, strict=True):
                v = y[lo : lo + k].astype(np.float64)
                want.append(f(v) if s == "count" or not np.isnan(v).all() else np.nan)
            _close(got[s], np.array(want), s)


# ----------------------------------------------------------- extreme axes and data, dtypes
@needs_x64
@pytest.mark.parametrize("road", OFFSET_ROADS, ids=lambda r: r[0])
@settings(max_examples=4)
@given(
    data=series(),
    width=hst.integers(1, 12),
    closed=hst.sampled_from(CLOSED),
)
def test_huge_offsets_int64_and_datetime_axes(data, width, closed, road):
    """x ~ 1e9 s as int64 and as ``datetime64`` (``"<w>s"`` widths), y ~ 1e8 + noise: every
    window's statistics equal pandas' (the variance of noise on a huge offset is not lost to
    cancellation), and the two axes give the same bits."""
    x, y = data
    method, min_periods, ddof = road
    xi = x.astype(np.int64) + 10**9
    yb = 1e8 + np.nan_to_num(y.astype(np.float64))
    stats = OFFSET_STATS[method]  # the offset test's programs: nothing new to compile
    kw = dict(closed=closed, min_periods=min_periods, ddof=ddof, method=method, capacity=CAPACITY)
    got = rolling_statistic(xi, yb, width, stats, **kw)
    got_t = rolling_statistic(xi.astype("datetime64[s]"), yb, f"{width}s", stats, **kw)
    roll = pd.Series(yb, index=_index(xi)).rolling(
        f"{width}s", closed=closed, min_periods=min_periods
    )
    for s in stats:
        # pandas' own running sums lose digits of the moments on a 1e8 offset
        kw = dict(rtol=1e-5, atol=1e-6) if s in ("var", "std", "sem", *SHAPE) else {}
        _close(got[s], _pandas(roll, s, ddof), s, **kw)
        np.testing.assert_array_equal(np.asarray(got_t[s]), np.asarray(got[s]), err_msg=s)


@settings(max_examples=10)
@given(data=series(), width=hst.integers(1, 8))
def test_integer_and_float32_data_keep_their_dtypes(data, width):
    """Integer ``y`` is reduced in the default float (never an integer wrap) and float32
    ``y`` stays float32, both equal to pandas."""
    x, y = data
    yi = (np.nan_to_num(y) * 1000).astype(np.int32)
    roll = pd.Series(yi.astype(np.float64), index=_index(x)).rolling(f"{width}s")
    got = rolling_statistic(x, yi, width, ("sum", "mean", "max"))
    for s in ("sum", "mean", "max"):
        assert np.asarray(got[s]).dtype == np.dtype(FLOAT), s
        _close(got[s], _pandas(roll, s, 0), s, rtol=2e-6 if not X64 else 1e-12, atol=1e-3)
    y32 = np.nan_to_num(y).astype(np.float32)
    out = rolling_statistic(x.astype(np.float32), y32, np.float32(width), "std")
    assert np.asarray(out).dtype == np.float32
    roll32 = pd.Series(y32.astype(np.float64), index=_index(x)).rolling(f"{width}s")
    _close(out, roll32.std(ddof=0).to_numpy(), "float32 std", **tol(np.float32))


def test_single_point_empty_and_wider_than_data():
    """One point: its own value (std 0, NaN with ddof=1); no points: empty results; a window
    wider than the whole series: the running (expanding) statistic, as pandas."""
    one = rolling_statistic(np.array([5.0]), np.array([3.0]), 1.0, ("mean", "std", "count"))
    assert [float(one[s][0]) for s in ("mean", "std", "count")] == [3.0, 0.0, 1.0]
    assert np.isnan(np.asarray(rolling_statistic(np.array([5.0]), np.array([3.0]), 1.0, "std",
                                                 ddof=1))).all()  # fmt: skip
    empty = rolling_statistic(np.array([], FLOAT), np.array([], FLOAT), 1.0, ("mean", "count"))
    assert all(np.asarray(v).shape == (0,) for v in empty.values())
    x = np.arange(7, dtype=np.int32)
    y = np.array([1.0, 4.0, np.nan, 2.0, 8.0, 5.0, 7.0], FLOAT)
    wide = rolling_statistic(x, y, 10**6, ("mean", "max", "count"))
    s = pd.Series(y.astype(np.float64))
    _close(wide["mean"], s.expanding().mean().to_numpy())
    _close(wide["max"], s.expanding().max().to_numpy())
    _close(wide["count"], s.expanding().count().to_numpy())


# ---------------------------------------------------------------- jit, vmap, traced widths
_BATCH = 3


@jax.jit
def _jitted(x, y, width):
    return rolling_statistic(x, y, width, MOMENTS, ddof=1)


@settings(max_examples=8)
@given(data=series(), width=hst.integers(1, 12), seed=hst.integers(0, 2**16))
def test_jit_vmap_and_traced_width_agree_with_eager(data, width, seed):
    """One compiled program (traced width, fixed N) vmapped over a batch of ``y`` gives the
    eager results row by row (eager calls pad to a bucket: the same windows)."""
    x, y = data
    rng = np.random.default_rng(seed)
    ys = np.stack([y, *rng.normal(0.0, 1.0, (_BATCH - 1, N)).astype(FLOAT)])
    batched = jax.vmap(_jitted, in_axes=(None, 0, None))(jnp.asarray(x), jnp.asarray(ys), width)
    for k in range(_BATCH):
        # the offset test's "auto" program (MOMENTS, min_periods=1, ddof=1)
        eager = rolling_statistic(x, ys[k], width, MOMENTS, ddof=1)
        for s, v in eager.items():
            _close(batched[s][k], np.asarray(v), f"{s}, batch row {k}")


# ---------------------------------------------------------------------------- bad arguments
X = np.arange(6.0)
Y6 = np.arange(6.0)
BAD = [
    (dict(width=-1.0), ValueError, "`width` must be >= 0"),
    (dict(width=np.nan), ValueError, "`width` holds NaN"),
    (dict(width=np.array([1.0, 2.0])), ValueError, "`width` must be a scalar"),
    (dict(width="7D"), TypeError, "`x` is not a time axis"),
    (dict(before=-1.0, after=1.0), ValueError, "`before` must be >= 0"),
    (dict(before=1.0, after=-0.5), ValueError, "`after` must be >= 0"),
    (dict(width=1.0, before=1.0), ValueError, "`width` or `before`/`after`"),
    (dict(before=1.0, center=True), ValueError, "center=True"),
    (dict(width=1.0, closed="middle"), ValueError, "`closed`"),
    (dict(width=1.0, nan_policy="skip"), ValueError, "`nan_policy`"),
    (dict(width=1.0, method="blocks"), ValueError, "`method`"),
    (dict(width=1.0, min_periods=-1), ValueError, "`min_periods`"),
    (dict(width=1.0, min_periods=1.5), TypeError, "`min_periods`"),
    (dict(width=1.0, ddof=-1, statistic="var"), ValueError, "`ddof`"),
    (dict(width=1.0, statistic="quantile"), TypeError, "`q=`"),
    (dict(width=1.0, statistic="quantile", q=1.5), ValueError, "`q` must be in"),
    (dict(width=1.0, statistic="mean", q=0.5), ValueError, "`q` is given"),
    (dict(width=1.0, statistic="avg"), ValueError, "'avg'"),
    (dict(width=1.0, statistic=()), TypeError, "`statistic`"),
    (dict(width=1.0, statistic="cov"), ValueError, "(N, C)"),
    (dict(width=1.0, statistic="median", capacity=0), ValueError, "`capacity`"),
    (dict(width=1.0, center="yes"), TypeError, "`center`"),
    (dict(width=1.0, window=2), ValueError, "`window`"),
    (dict(window=0), ValueError, "`window` must be a positive int"),
    (dict(window=2.5), TypeError, "`window`"),
    (dict(window=2, closed="left"), ValueError, "`closed` must be 'right'"),
    (dict(window=2, center="yes"), TypeError, "`center`"),
    (dict(window=2, method="wavelet", statistic="mean"), ValueError, "cannot compute 'mean'"),
    (dict(x=X[::-1].copy(), width=1.0), ValueError, "`x` must be sorted"),
    (dict(x=np.array([0.0, np.nan, 2, 3, 4, 5]), width=1.0), ValueError, "`x` holds NaN"),
    (dict(x=None, width=1.0), TypeError, "`x` is needed"),
    (dict(y=Y6[:5], width=1.0), ValueError, "same length"),
    (dict(y=Y6 + 1j, width=1.0), TypeError, "`y` must be real numeric"),
    (dict(width=1.0, at=np.array([np.nan, 1.0])), ValueError, "`at` holds NaN"),
]


@pytest.mark.parametrize(("kwargs", "error", "text"), BAD, ids=[b[2] for b in BAD])
def test_bad_arguments_are_clear_errors(kwargs, error, text):
    """Each bad argument is a ValueError/TypeError naming it, raised before any XLA work."""
    kw = dict(kwargs)
    x, y = kw.pop("x", X), kw.pop("y", Y6)
    with pytest.raises(error, match=r"rolling_statistic: .*" + re.escape(text)):
        rolling_statistic(x, y, **kw)


@needs_x64
def test_time_axis_refuses_plain_number_widths():
    """On a datetime64 axis a plain number would silently mean nanoseconds: a TypeError."""
    dates = np.arange(6).astype("datetime64[s]")
    with pytest.raises(TypeError, match="`width` must be a duration"):
        rolling_statistic(dates, Y6, 2)
    with pytest.raises(ValueError, match="not a fixed duration"):
        rolling_statistic(dates, Y6, "2 parsecs")
