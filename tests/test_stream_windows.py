"""stream/shard with centred, asymmetric and hopping/tumbling windows equal the in-memory path.

The references are the in-memory resolvers (``ranges.rolling``, ``ranges.dynamic``) for the
index ranges and NumPy's NaN-skipping reductions over those ranges for the values (plus one
``rolling_statistic`` / pandas check), so the block driver's look-ahead is checked at several
block sizes: blocks far smaller than a window, windows straddling every block edge, ties on
the edges. One block kernel is compiled per block size (same capacity and statistics).
"""

import re

import jax
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from compilations import compilations
from references import FLOAT, X64, needs_x64


N = 300
CAP = 64
STATS = ("sum", "max", "mean")
TOL = dict(rtol=1e-12, atol=1e-12) if X64 else dict(rtol=2e-5, atol=2e-5)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(15)
    x = np.sort(np.round(rng.uniform(0.0, 60.0, N), 0)).astype(FLOAT)  # many ties
    y = rng.normal(3.0, 2.0, N).astype(FLOAT)
    y[[5, 6, 150]] = np.nan
    return x, y


def _numpy_stats(y, start, count, cap=CAP):
    """NumPy's NaN-skipping sum/max/mean over the held part ``[start, start + min(count, cap))``."""
    out = {s: np.full(start.shape, np.nan) for s in STATS}
    for i, (a, c) in enumerate(zip(start.ravel(), count.ravel(), strict=True)):
        v = y[a : a + min(c, cap)]
        v = v[~np.isnan(v)]
        out["sum"].flat[i] = v.sum()
        if v.size:
            out["max"].flat[i] = v.max()
            out["mean"].flat[i] = v.mean()
    return out


def _check(out, r, y):
    start, count = np.asarray(r.start), np.asarray(r.count)
    np.testing.assert_array_equal(out["start"], start)
    np.testing.assert_array_equal(out["count"], count)
    np.testing.assert_array_equal(out["overflow"], count > CAP)
    want = _numpy_stats(y, start, count)
    for s in STATS:
        np.testing.assert_allclose(out[s], want[s], **TOL, err_msg=s)


ROLLING = [
    dict(width=5.0, center=True),
    dict(width=4.0, center=True, closed="left"),  # ties at x[i] +- 2 on the integer grid
    dict(before=2.0, after=3.5),
    dict(before=1.0, after=2.0, closed="both"),
    dict(before=3.0, after=1.0, closed="neither"),
    dict(after=2.0),  # before 0: only look-ahead
    dict(before=2.0, after=0.0),  # after 0: pandas' trailing rule (ends at its own row)
    dict(width=40.0, center=True),  # windows overflowing the capacity: the first CAP points
]


AT = np.array([30.5, -3.0, 0.0, 59.0, 70.0, 12.0])  # unsorted anchors, some outside the data


@pytest.fixture(scope="module")
def rolling_refs(data):
    """The in-memory ranges of every ROLLING case, per point and at AT: one jitted program."""

    def ranges(x):
        rows = [jaxsubset.ranges.rolling(x, **kw) for kw in ROLLING]
        return rows, [jaxsubset.ranges.rolling(x, at=AT, **kw) for kw in ROLLING]

    return jax.jit(ranges)(data[0])


@pytest.mark.parametrize(
    "i", range(len(ROLLING)), ids=[",".join(f"{k}={v}" for k, v in kw.items()) for kw in ROLLING]
)
def test_stream_rolling_windows_reaching_ahead(data, rolling_refs, i):
    x, y = data
    kw = ROLLING[i]
    r, ra = rolling_refs[0][i], rolling_refs[1][i]
    common = dict(capacity=CAP, statistic=STATS, nan_policy="omit")
    for block in (7, 64, 1000):  # blocks shorter than a window, windows across edges, one block
        out = jaxsubset.stream((x, y), "rolling", block_size=block, **common, **kw)
        _check(out, r, y)
    if kw.get("width") == 40.0:
        assert out["overflow"].any()
    # block edges between tied x: each tie's windows end by value (or at their row) all alike
    edges = np.flatnonzero(x[1:] == x[:-1]) + 1
    assert np.isin(np.arange(7, N, 7), edges).sum() > 10
    # explicit anchors, from a list of blocks of odd sizes
    pieces = [(x[a : a + 37], y[a : a + 37]) for a in range(0, N, 37)]
    out = jaxsubset.stream(pieces, "rolling", at=AT, block_size=64, **common, **kw)
    _check(out, ra, y)


def test_stream_centred_equals_rolling_statistic_and_pandas(data):
    x, y = data
    got = jaxsubset.stream(
        (x, y),
        "rolling",
        width=6.0,
        center=True,
        capacity=CAP,
        statistic=STATS,
        block_size=7,
        nan_policy="omit",
    )
    want = jaxsubset.rolling_statistic(x, y, 6.0, ("sum", "max"), center=True, nan_policy="omit")
    np.testing.assert_allclose(got["sum"], want["sum"], **TOL)
    np.testing.assert_array_equal(got["max"], want["max"])
    s = pd.Series(y.astype(np.float64), index=pd.to_datetime(x.astype(np.int64), unit="s"))
    pd_max = s.rolling("6s", center=True, min_periods=1).max().to_numpy()
    np.testing.assert_allclose(got["max"], pd_max, **TOL)


DYNAMIC = [
    dict(every=5.0),  # tumbling
    dict(every=3.0, period=7.0, offset=1.0),  # hopping, overlapping
    dict(every=10.0, period=4.0, closed="right"),  # gaps, the first window open at its start
    dict(every=6.0, offset=-2.5, closed="both"),
    dict(every=2.0, period=30.0),  # overflowing windows
]


@pytest.mark.parametrize("kw", DYNAMIC, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_stream_dynamic_windows_equal_in_memory(data, kw):
    x, y = data
    r = jaxsubset.ranges.dynamic(x, **kw)
    common = dict(capacity=CAP, statistic=STATS, nan_policy="omit")
    for block in (7, 64):
        out = jaxsubset.stream((x, y), "dynamic", block_size=block, **common, **kw)
        _check(out, r, y)
    pieces = lambda: iter([(x[a : a + 50], y[a : a + 50]) for a in range(0, N, 50)])  # noqa: E731
    out = jaxsubset.stream(pieces, "dynamic", block_size=64, **common, **kw)
    _check(out, r, y)


def test_stream_dynamic_against_polars(data):
    pl = pytest.importorskip("polars")
    x, y = data
    xi, yf = x.astype(np.int64), np.nan_to_num(y.astype(np.float64))
    got = jaxsubset.stream(
        (xi, yf),
        "dynamic",
        every=4,
        period=9,
        offset=1,
        capacity=CAP,
        statistic="sum",
        block_size=32,
    )
    df = (
        pl.DataFrame({"x": xi, "y": yf})
        .group_by_dynamic("x", every="4i", period="9i", offset="1i", closed="left")
        .agg(pl.col("y").sum(), pl.len())
    )
    keep = got["count"] > 0  # polars drops empty windows
    np.testing.assert_array_equal(got["count"][keep], df["len"].to_numpy())
    np.testing.assert_allclose(got["sum"][keep], df["y"].to_numpy(), **TOL)


@needs_x64
def test_stream_windows_on_time_axes_in_nanoseconds():
    # a time axis streams as int64 nanoseconds (what the in-memory path holds a datetime64
    # axis in: the dynamic windows below check that link); references in one jitted program
    rng = np.random.default_rng(3)
    sec = 10**9
    ns = np.sort(rng.integers(0, 200, 400)) * sec + 1_600_000_000 * sec
    t = ns.astype("datetime64[ns]")
    y = rng.normal(size=400)
    cases = [
        dict(before=3 * sec, after=2 * sec),
        dict(width=5 * sec, center=True),
        dict(width=5, center=True, closed="left"),  # an odd width halved exactly on integers
    ]
    refs = jax.jit(lambda a: [jaxsubset.ranges.rolling(a, **kw) for kw in cases])(ns)
    for kw, r in zip(cases, refs, strict=True):
        out = jaxsubset.stream(
            (ns, y),
            "rolling",
            capacity=CAP,
            statistic=STATS,
            block_size=64,
            nan_policy="omit",
            **kw,
        )
        _check(out, r, y)
    r = jaxsubset.ranges.dynamic(t, "7s", period="10s", offset="1s")
    out = jaxsubset.stream(
        (ns, y),
        "dynamic",
        every=7 * sec,
        period=10 * sec,
        offset=sec,
        capacity=CAP,
        statistic=STATS,
        block_size=64,
        nan_policy="omit",
    )
    _check(out, r, y)
    # saturating ends of int64: windows reaching past the dtype count every later point
    big = np.array([2**63 - 5, 2**63 - 3, 2**63 - 1, 2**63 - 1], np.int64)
    yb = np.arange(4.0)
    closeds = ("right", "left", "neither")
    refs = jax.jit(
        lambda a: [
            jaxsubset.ranges.rolling(a, before=2**63, after=2**62, closed=c) for c in closeds
        ]
    )(big)
    for closed, r in zip(closeds, refs, strict=True):
        out = jaxsubset.stream(
            (big, yb),
            "rolling",
            before=2**63,
            after=2**62,
            capacity=CAP,
            closed=closed,
            statistic=STATS,
            block_size=7,  # the kernel of the tests above (their spec and block shape)
            nan_policy="omit",
        )
        _check(out, r, yb)


def test_shard_centred_and_dynamic_windows_one_device(data):
    x, y = data
    for kind, kw, r in (
        (
            "rolling",
            dict(before=2.0, after=3.0),
            jaxsubset.ranges.rolling(x, before=2.0, after=3.0),
        ),
        ("dynamic", dict(every=4.0, period=6.0), jaxsubset.ranges.dynamic(x, 4.0, period=6.0)),
    ):
        out = jaxsubset.shard(
            x, y, kind, capacity=CAP, statistic=STATS, nan_policy="omit", devices=1, **kw
        )
        _check(out, r, y)


def test_stream_windows_one_kernel_and_errors(data):
    x, y = data
    jaxsubset.stream(
        (x, y), "rolling", width=3.0, center=True, capacity=CAP, statistic="sum", block_size=40
    )
    with compilations() as seen:  # other extents, same spec and block shape: no compilation
        jaxsubset.stream(
            (x, y), "rolling", before=1.0, after=4.0, capacity=CAP, statistic="sum", block_size=40
        )
        jaxsubset.stream((x, y), "dynamic", every=3.0, capacity=CAP, statistic="sum", block_size=40)
    assert seen.of("block_kernel") == 0, seen
    with pytest.raises(ValueError, match=re.escape("give `width` or `before`/`after`, not both")):
        jaxsubset.stream((x, y), "rolling", width=1.0, after=1.0, capacity=4, statistic="sum")
    with pytest.raises(ValueError, match=re.escape("`after` must be >= 0")):
        jaxsubset.stream((x, y), "rolling", after=-1.0, capacity=4, statistic="sum")
    with pytest.raises(ValueError, match=re.escape("needs a scalar `after`")):
        jaxsubset.stream((x, y), "rolling", after=[1.0, 2.0], capacity=4, statistic="sum")
    with pytest.raises(TypeError, match=re.escape("missing the window `width` (or")):
        jaxsubset.stream((x, y), "rolling", center=True, capacity=4, statistic="sum")
    with pytest.raises(ValueError, match=re.escape("`every` must be > 0")):
        jaxsubset.stream((x, y), "dynamic", every=0.0, capacity=4, statistic="sum")
    with pytest.raises(TypeError, match=re.escape("missing the window spacing `every`")):
        jaxsubset.stream((x, y), "dynamic", capacity=4, statistic="sum")
    with pytest.raises(TypeError, match="is a date/duration"):
        jaxsubset.stream((x, y), "dynamic", every="1mo", capacity=4, statistic="sum")
    with pytest.raises(TypeError, match=re.escape("unexpected argument(s) ['width']")):
        jaxsubset.stream((x, y), "dynamic", every=1.0, width=2.0, capacity=4, statistic="sum")
    xn = x.copy()
    xn[0] = np.nan
    with pytest.raises(ValueError, match="holds NaN at index 0"):
        jaxsubset.stream((xn, y), "dynamic", every=1.0, capacity=4, statistic="sum")


def test_dynamic_fractional_period_or_offset_on_integer_x_is_not_truncated():
    # [s, s + 2.5) on integers holds s, s+1, s+2 (it used to be truncated to [s, s + 2))
    x = np.arange(20)
    for kw in (dict(period=2.5), dict(offset=2.5), dict(period=7.5, offset=-1.5)):
        got = jaxsubset.ranges.dynamic(x, 5, **kw)
        want = jaxsubset.ranges.dynamic(x.astype(FLOAT), 5.0, **kw)
        np.testing.assert_array_equal(got.start, want.start)
        np.testing.assert_array_equal(got.count, want.count)
    assert jaxsubset.ranges.dynamic(x, 5, period=2.5).count.tolist() == [3, 3, 3, 3]
    assert jaxsubset.ranges.dynamic(x, 5, offset=2.5).start.tolist() == [0, 3, 8, 13, 18]
