"""Shape buckets of eager calls: identical results, one compilation per bucket of lengths.

Eager ``range_statistic``, ``rolling_statistic`` and ``binned_statistic`` pad N (and K) to a
bucket size and run one jitted program per bucket; the same call inside ``jax.jit`` is not
bucketed (its shapes are the caller's), so it is the reference here, with NumPy/pandas-style
references besides. Compilations are counted with JAX's own events (``tests/compilations.py``).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from compilations import compilations
from jaxsubset._bucket import MIN_K, MIN_N, bucket
from references import FLOAT


RANGE_STATS = ("count", "sum", "mean", "var", "std", "min", "max", "median")
BINNED_STATS = ("mean", "std", "median", "count", "sum", "min", "max")


def same(a, b) -> None:
    """Bitwise equal (NaN equal to NaN), dtype and shape included."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _data(n: int, seed: int = 0, channels: tuple[int, ...] = ()):
    rng = np.random.default_rng(seed)
    # ties in x (steps of 0, 1 or 2), NaN readings, a repeated value (ties in the median)
    x = np.cumsum(rng.integers(0, 3, n)).astype(FLOAT)
    y = rng.standard_normal((n, *channels)).astype(FLOAT)
    y[:: max(n // 7, 1)] = 0.5
    if n > 10:
        y[3] = np.nan
    return x, y


def test_bucket_sizes():
    assert [bucket(n) for n in (0, 1, 1000, MIN_N)] == [MIN_N] * 4
    assert bucket(MIN_N + 1) == MIN_N * 5 // 4
    assert [bucket(n, MIN_K) for n in (1, 64, 65, 81, 97, 113, 129)] == [
        64, 64, 80, 96, 112, 128, 160
    ]  # fmt: skip
    sizes = sorted({bucket(n) for n in range(1, 10**6, 997)})
    assert all(b / a <= 1.25 for a, b in zip(sizes, sizes[1:], strict=False))
    assert all(bucket(n) >= n for n in range(1, 10**5, 13))


@pytest.mark.parametrize("n, channels", [(0, ()), (5, ()), (1000, (2,)), (9000, ())])
def test_range_statistic_equals_unbucketed(n, channels):
    x, y = _data(n, channels=channels)
    ranges = [
        jaxsubset.ranges.chunks(x, 7),
        # 2 x 2 ranges, clipped to [0, N): one starting below 0, one past the end, one empty
        jaxsubset.Ranges(jnp.asarray([[0, -3], [2, n + 5]]), jnp.asarray([[4, 2], [0, 9]])),
    ]
    for r, policy in zip(ranges, ("propagate", "omit"), strict=True):
        got = jaxsubset.range_statistic(y, r, RANGE_STATS, nan_policy=policy)
        cap = max(int(np.max(np.asarray(r.count), initial=1)), 1)
        want = jax.jit(
            lambda y, r, p=policy, c=cap: jaxsubset.range_statistic(
                y, r, RANGE_STATS, nan_policy=p, capacity=c
            )
        )(y, r)
        for s in RANGE_STATS:
            same(got[s], want[s])
    # against NumPy: the chunks of array_split
    got = jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, 7), "mean", nan_policy="omit")
    if n >= 100:
        ref = np.array([np.nanmean(c, axis=0) for c in np.array_split(y, 7)], FLOAT)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5)


@pytest.mark.parametrize("n", [1, 9000])
def test_rolling_statistic_equals_unbucketed(n, monkeypatch):
    x, y = _data(n, seed=1)
    at = np.array([x[0] - 1, x[-1], (x[0] + x[-1]) / 2], FLOAT)
    for kw, policy in (
        (dict(), "omit"),
        (dict(at=at), "propagate"),
        (dict(closed="both", min_periods=3, ddof=1), "omit"),
    ):
        got = jaxsubset.rolling_statistic(x, y, 5.0, RANGE_STATS, nan_policy=policy, **kw)
        # the reference: the same eager call unbucketed
        monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")
        want = jaxsubset.rolling_statistic(x, y, 5.0, RANGE_STATS, nan_policy=policy, **kw)
        monkeypatch.delenv("JAXSUBSET_BUCKETS")
        for s in RANGE_STATS:
            same(got[s], want[s])
    # against a direct loop: the window of row i is x[i] - 5 < x <= x[i], rows up to i
    got = np.asarray(jaxsubset.rolling_statistic(x, y, 5.0, "sum"))
    ref = [np.nansum(y[: i + 1][x[: i + 1] > x[i] - 5.0]) for i in range(min(n, 50))]
    np.testing.assert_allclose(got[: len(ref)], ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, x_sorted", [(5, True), (9000, False)])
def test_binned_statistic_equals_unbucketed(n, x_sorted):
    x, y = _data(n, seed=2, channels=(2,))
    rng = np.random.default_rng(3)
    if not x_sorted:
        x = rng.permutation(x)
    vals = np.ascontiguousarray(y.T)
    # an empty bin (between two close edges), points below and above the edges
    lo, span = x.min() - 1, np.ptp(x) + 2
    edges = lo + span * np.array([0.1, 0.3, 0.45, 0.46, 0.9])
    for bins, names, policies in (
        (edges, BINNED_STATS, ("propagate",)),
        (edges, ("mean", "median", "min"), ("omit",)),
        (4, ("mean", "median"), ("propagate",)),
    ):
        for policy in policies:
            # the unbucketed reference: every statistic in one jitted program
            want = jax.jit(
                lambda x, v, b=bins, p=policy, names=names: {
                    s: jaxsubset.binned_statistic(x, v, s, bins=b, nan_policy=p, x_sorted=x_sorted)
                    for s in names
                }
            )(x, vals)
            for s in names:
                got = jaxsubset.binned_statistic(x, vals, s, bins=bins, nan_policy=policy)
                same(got.statistic, want[s].statistic)
                same(got.binnumber, want[s].binnumber)
                same(got.bin_edges, want[s].bin_edges)
                assert isinstance(got.statistic, np.ndarray)


def test_binned_statistic_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    x, y = _data(3000, seed=4)
    y = np.nan_to_num(y)
    for s in ("mean", "std", "median", "count"):
        got = jaxsubset.binned_statistic(x, y, s, bins=13)
        ref = scipy_stats.binned_statistic(x, y, s, bins=13)
        np.testing.assert_allclose(got.statistic, ref.statistic, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got.binnumber, ref.binnumber)


def test_bucketing_off_gives_the_same(monkeypatch):
    x, y = _data(1000, seed=5)
    r = jaxsubset.ranges.chunks(x, 9)
    on = jaxsubset.range_statistic(y, r, RANGE_STATS)
    roll_on = jaxsubset.rolling_statistic(x, y, 3.0, ("mean", "max"))
    bin_on = jaxsubset.binned_statistic(x, y, "median", bins=6)
    monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")
    with compilations() as seen:
        off = jaxsubset.range_statistic(y, r, RANGE_STATS)
        roll_off = jaxsubset.rolling_statistic(x, y, 3.0, ("mean", "max"))
        bin_off = jaxsubset.binned_statistic(x, y, "median", bins=6)
    assert not any("_padded" in name for name in seen)
    for s in RANGE_STATS:
        same(on[s], off[s])
    for s in ("mean", "max"):
        same(roll_on[s], roll_off[s])
    same(bin_on.statistic, bin_off.statistic)


def _lengths_then_new_bucket(call, program: str) -> None:
    """Lengths 1000, 1100, 1200 compile ``program`` once; a length in a new bucket once more."""
    jax.clear_caches()
    counts = []
    for n in (1000, 1100, 1200, MIN_N + 100, MIN_N + 200):
        x, y = _data(n, seed=n)
        with compilations() as seen:
            jax.block_until_ready(call(x, y))
        counts.append(seen.of(program))
    assert counts == [1, 0, 0, 1, 0]


def test_range_statistic_compiles_once_per_bucket():
    _lengths_then_new_bucket(
        lambda x, y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, 5), ("mean", "std")),
        "_padded_reduce",
    )
    # the number of ranges too: 10, 20, 40 ranges share the bucket of 64
    with compilations() as seen:
        for k in (10, 20, 40):
            jaxsubset.range_statistic(
                np.ones(1000, FLOAT), jaxsubset.ranges.chunks(np.ones(1000), k)
            )
    assert seen.of("_padded_reduce") == 1


def test_rolling_statistic_compiles_once_per_bucket():
    call = lambda x, y: jaxsubset.rolling_statistic(x, y, 4.0, "mean")  # noqa: E731
    _lengths_then_new_bucket(call, "_padded_reduce")
    _lengths_then_new_bucket(call, "_padded_ranges")


@pytest.mark.parametrize("x_sorted", [True, False])
def test_binned_statistic_compiles_once_per_bucket(x_sorted):
    def call(x, y):
        if not x_sorted:
            x = x[::-1].copy()
        return jaxsubset.binned_statistic(x, y, "std", bins=20).statistic

    _lengths_then_new_bucket(call, "_binned_core")


def test_under_jit_nothing_is_padded():
    x, y = _data(1000, seed=6)
    with compilations() as seen:
        jax.jit(lambda x, y: jaxsubset.binned_statistic(x, y, "mean", bins=4).statistic)(x, y)
        jax.jit(lambda y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(y, 5)))(y)
    assert not any("_padded" in name for name in seen)
    # the user's shapes: the program sees N = 1000, not the bucket
    text = (
        jax.jit(lambda y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(y, 5)))
        .lower(jnp.asarray(y))
        .as_text()
    )
    assert f"{MIN_N}x" not in text and "1000x" in text


def test_every_registered_statistic_equals_unbucketed(monkeypatch):
    # every statistic of the registry (sem, first, last, skew, kurt, ... as they are added)
    from jaxsubset._statistics._registry import STATISTICS

    names = tuple(s for s in STATISTICS if s != "quantile")  # quantile needs q=
    x, y = _data(1000, seed=7, channels=(2,))
    r = jaxsubset.ranges.chunks(x, 7)
    got = jaxsubset.range_statistic(y, r, names, nan_policy="omit")
    want = jax.jit(
        lambda y, r: jaxsubset.range_statistic(y, r, names, nan_policy="omit", capacity=256)
    )(y, r)
    roll = jaxsubset.rolling_statistic(x, y, 6.0, names)
    monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")
    roll_off = jaxsubset.rolling_statistic(x, y, 6.0, names)
    for s in names:
        same(got[s], want[s])
        same(roll[s], roll_off[s])
