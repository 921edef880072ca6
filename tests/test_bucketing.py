"""Shape buckets of eager calls: identical results, one compilation per bucket of lengths.

Eager ``range_statistic``, ``rolling_statistic``, ``binned_statistic`` and the constructors
(``chunks``, ``select``, ``rolling``, ``bins``, ...) pad N (and K) to a bucket size and run one
jitted program per bucket; the same call inside ``jax.jit`` is not bucketed (its shapes are
the caller's), so it is the reference here (one program for many cases, not the op-by-op
eager call), with NumPy/pandas-style references besides. Compilations are counted with JAX's
own events (``tests/compilations.py``).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from compilations import compilations
from jaxsubset._core import _bucket
from jaxsubset._core._bucket import MIN_K, MIN_N, bucket
from jaxsubset._native import usable as native_usable
from references import FLOAT


RANGE_STATS = ("count", "sum", "mean", "var", "std", "min", "max", "median")
BINNED_STATS = ("mean", "std", "median", "count", "sum", "min", "max")
MOMENTS = ("var", "std", "sem", "skew", "kurt")
ROUNDED = ("sum", "mean", *MOMENTS)  # sums: to their rounding across programs (same_statistic)


def same(a, b) -> None:
    """Bitwise equal (NaN equal to NaN), dtype and shape included."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def same_statistic(s: str, a, b) -> None:
    """:func:`same`, but the sums and moments to the rounding of a sum: the padded road's sums
    are XLA's own reductions, whose order follows the program's shapes, and an eager call runs
    in the program of its bucket (BENCHMARKS.md, issue 29); under the suite's quick build the
    moments of the tree may round apart in the last bits too (users' fully optimised build:
    bit for bit there, checked with ``JAX_DISABLE_MOST_OPTIMIZATIONS=0``;
    tests/test_optimization_level.py)."""
    if s not in ROUNDED:
        return same(a, b)
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    scale = np.max(np.abs(b[np.isfinite(b)]), initial=1.0)  # kurt: m4 / m2**2 - 3
    np.testing.assert_allclose(a, b, rtol=0, atol=64 * np.finfo(a.dtype).eps * scale)


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


# the large lengths in the 64-bit run only (conftest.py's `one_mode`): the padding is the
# same host code in either mode, and the small lengths run in both
LARGE = pytest.mark.one_mode


@pytest.mark.parametrize(
    "n, channels", [(0, ()), (5, ()), (1000, (2,)), pytest.param(9000, (), marks=LARGE)]
)
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
            same_statistic(s, got[s], want[s])
    # against NumPy: the chunks of array_split
    got = jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(x, 7), "mean", nan_policy="omit")
    if n >= 100:
        ref = np.array([np.nanmean(c, axis=0) for c in np.array_split(y, 7)], FLOAT)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5)


@pytest.mark.parametrize("n", [1, pytest.param(9000, marks=LARGE)])
def test_rolling_statistic_equals_unbucketed(n):
    x, y = _data(n, seed=1)
    at = np.array([x[0] - 1, x[-1], (x[0] + x[-1]) / 2], FLOAT)
    cases = (
        (dict(), "omit"),
        (dict(at=at), "propagate"),
        (dict(closed="both", min_periods=3, ddof=1), "omit"),
    )

    def calls(x, y):
        return [
            jaxsubset.rolling_statistic(x, y, 5.0, RANGE_STATS, nan_policy=p, capacity=64, **kw)
            for kw, p in cases
        ]

    got = calls(x, y)
    # the reference: the same calls unbucketed, as ONE program (`at` a constant, as eagerly)
    want = jax.jit(calls)(x, y)
    for g, w in zip(got, want, strict=True):
        for s in RANGE_STATS:
            same_statistic(s, g[s], w[s])
    # against a direct loop: the window of row i is x[i] - 5 < x <= x[i], rows up to i
    got = np.asarray(jaxsubset.rolling_statistic(x, y, 5.0, "sum"))
    ref = [np.nansum(y[: i + 1][x[: i + 1] > x[i] - 5.0]) for i in range(min(n, 50))]
    np.testing.assert_allclose(got[: len(ref)], ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n, x_sorted", [(5, True), pytest.param(9000, False, marks=LARGE)])
def test_binned_statistic_equals_unbucketed(n, x_sorted):
    x, y = _data(n, seed=2, channels=(2,))
    rng = np.random.default_rng(3)
    if not x_sorted:
        x = rng.permutation(x)
    vals = np.ascontiguousarray(y.T)
    # an empty bin (between two close edges), points below and above the edges
    lo, span = x.min() - 1, np.ptp(x) + 2
    edges = lo + span * np.array([0.1, 0.3, 0.45, 0.46, 0.9])
    # every statistic at the small length; the large one (a shuffled x) one per kind of road
    every = BINNED_STATS if n < 100 else ("std", "median", "max")
    for bins, names, policies in (
        (edges, every, ("propagate",)),
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
    # the switch itself (read at every call); the off path is the op-by-op eager call, so the
    # calls here are the cheap ones: the other tests compare with one jitted program instead
    assert _bucket.enabled()
    for value in ("off", "0", "no", " OFF "):
        monkeypatch.setenv("JAXSUBSET_BUCKETS", value)
        assert not _bucket.enabled()
    monkeypatch.delenv("JAXSUBSET_BUCKETS")
    x, y = _data(50, seed=5)
    r = jaxsubset.ranges.chunks(x, 9)

    def calls():
        return (
            jaxsubset.range_statistic(y, r, "sum"),
            jaxsubset.binned_statistic(x, y, "count", bins=6),
            jaxsubset.chunks(x, y, 4),
            jaxsubset.select(x, y, 3.0, 20.0, capacity=16),
        )

    on = calls()
    monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")
    with compilations() as seen:
        off = calls()
    assert not any(name.startswith(("jit(_padded", "jit(eager_")) for name in seen), seen
    same(on[0], off[0])
    same(on[1].statistic, off[1].statistic)
    same(on[1].binnumber, off[1].binnumber)
    _same_subsets(on[2], off[2])
    _same_subsets(on[3], off[3])


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
        "eager_reduce",
    )
    # the number of ranges too: 10, 20, 40 ranges share the bucket of 64 (ranges without a
    # static bound on their length: the tree's folds, the same bits for any number of ranges)
    with compilations() as seen:
        for k in (10, 20, 40):
            r = jaxsubset.ranges.chunks(np.ones(1000), k)
            jaxsubset.range_statistic(np.ones(1000, FLOAT), jaxsubset.Ranges(r.start, r.count))
    assert seen.of("eager_reduce") == 1


TOL = 1e-5 if FLOAT == np.float32 else 1e-12


def test_few_long_ranges_take_the_padded_road(monkeypatch):
    """Chunks (a static bound, few slots per point) reduce on the padded road: eagerly bucketed
    (N and K padded: 7 and 6 chunks share one program) or not and under jit, the same results
    (the sums and moments to the rounding of a sum: XLA's reductions in programs of other
    shapes), on the tree to rounding."""
    from jaxsubset.reduce import padded_fits, road as choose

    # the pure-JAX roads' rule (on the CPU the native road, where built, takes them all:
    # tests/test_native.py)
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")
    # the rule: K * bound <= 8 N (the order statistics: K * capacity <= 2 N), fewer ranges
    # than points (windows keep their roads)
    assert padded_fits(7, 1000, 256, 256) == (True, True)
    assert padded_fits(7, 1000, 2048, 512) == (False, False)
    assert padded_fits(1000, 1000, 2, 2) == (False, True)
    assert padded_fits(7, 1000, None, None) == (False, False)
    assert choose("ranges", "std", "auto", "f", (True, False)) == "reference"
    assert choose("ranges", "median", "auto", "f", (True, False)) == "wavelet"
    assert choose("ranges", "std", "tree", "f", (True, True)) == "tree"
    x, y = _data(1000, channels=(2,))
    stats = ("sum", "mean", "std", "max", "median", "quantile")
    folded = ("sum", "mean", "std", "max")
    programs = []
    for k in (7, 6):  # chunks of at most 143 and 167 points: the same bound (256)
        r = jaxsubset.ranges.chunks(x, k)
        with compilations() as seen:
            got = jaxsubset.range_statistic(y, r, stats, q=0.25, ddof=1)
        programs.append(seen.of("eager_reduce"))
        with monkeypatch.context() as m:
            m.setenv("JAXSUBSET_BUCKETS", "off")
            off = jaxsubset.range_statistic(y, r, stats, q=0.25, ddof=1)
        jitted = jax.jit(lambda y, r: jaxsubset.range_statistic(y, r, stats, q=0.25, ddof=1))(y, r)
        tree = jaxsubset.range_statistic(y, r, folded, ddof=1, method="tree")
        pieces = np.array_split(y.astype(np.float64), k)
        numpy = {
            "sum": [c.sum(axis=0) for c in pieces],
            "std": [c.std(axis=0, ddof=1) for c in pieces],
            "median": [np.median(c, axis=0) for c in pieces],
            "quantile": [np.quantile(c, 0.25, axis=0) for c in pieces],
        }
        for s in stats:
            same_statistic(s, got[s], off[s])
            same_statistic(s, got[s], jitted[s])
            if s in tree:
                np.testing.assert_allclose(tree[s], got[s], rtol=TOL)
            if s in numpy:
                np.testing.assert_allclose(got[s], np.array(numpy[s]), rtol=TOL, atol=TOL)
    assert programs[0] >= 1 and programs[1] == 0, programs  # 6 chunks: the program of 7


def test_rolling_statistic_compiles_once_per_bucket():
    call = lambda x, y: jaxsubset.rolling_statistic(x, y, 4.0, "mean")  # noqa: E731
    if native_usable():
        # trailing windows on the native road: one bucketed program resolves and reduces
        # them in the x-width kernel (its width operand made on the host: exact in either mode)
        _lengths_then_new_bucket(call, "_xwidth_program")
        call = lambda x, y: jaxsubset.rolling_statistic(x, y, 4.0, "mean", method="tree")  # noqa: E731
    _lengths_then_new_bucket(call, "eager_reduce")
    _lengths_then_new_bucket(call, "eager_windows")


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
    assert not any(name.startswith(("jit(_padded", "jit(eager_")) for name in seen), seen
    # the user's shapes: the program sees N = 1000, not the bucket
    text = (
        jax.jit(lambda y: jaxsubset.range_statistic(y, jaxsubset.ranges.chunks(y, 5)))
        .lower(jnp.asarray(y))
        .as_text()
    )
    assert f"{MIN_N}x" not in text and "1000x" in text


def test_every_registered_statistic_equals_unbucketed():
    # every statistic of the registry (sem, first, last, skew, kurt, ... as they are added)
    from jaxsubset.reduce._registry import STATISTICS

    names = tuple(s for s in STATISTICS if s != "quantile")  # quantile needs q=
    x, y = _data(1000, seed=7, channels=(2,))
    r = jaxsubset.ranges.chunks(x, 7)
    got = jaxsubset.range_statistic(y, r, names, nan_policy="omit")
    want = jax.jit(
        lambda y, r: jaxsubset.range_statistic(y, r, names, nan_policy="omit", capacity=256)
    )(y, r)
    roll = jaxsubset.rolling_statistic(x, y, 6.0, names)
    roll_off = jax.jit(lambda x, y: jaxsubset.rolling_statistic(x, y, 6.0, names, capacity=64))(
        x, y
    )
    for s in names:
        for a, b in ((got[s], want[s]), (roll[s], roll_off[s])):
            same_statistic(s, a, b)


# ---------------------------------------------------------------------------- constructors
def _same_subsets(a, b) -> None:
    """Every field bitwise equal: values, mask, start, count (so overflow), shapes, dtypes."""
    for field in ("x", "y", "mask", "start", "count"):
        same(getattr(a, field), getattr(b, field))
    assert a.capacity == b.capacity and a.batch_shape == b.batch_shape


def _constructors(x, xi, n):
    """``name -> f(x, y)``: every constructor, edge cases included (bounds past both ends,
    empty pieces, overflowing capacities, tied x, integer x with float bounds)."""
    top = float(x[-1])
    edges = np.array([-1.0, 2.0, 2.0, 10.0, max(top, 10.0)])
    at = np.array([[x[0] - 1, top], [top / 2, 1e9]], FLOAT)
    return {
        "chunks": lambda x, y: jaxsubset.chunks(x, y, 7),
        "chunks many": lambda x, y: jaxsubset.chunks(x, y, n + 3),  # empty pieces
        "chunks size": lambda x, y: jaxsubset.chunks(x, y, size=9),
        "sliding": lambda x, y: jaxsubset.sliding(x, y, min(3, n), step=2),
        "select": lambda x, y: jaxsubset.select(
            x, y, np.array([-1.0, 3.0, top]), np.array([2.0, 50.0, 1e9]), capacity=8
        ),
        "select both": lambda x, y: jaxsubset.select(x, y, 2, 5, capacity=4, closed="both"),
        "rolling": lambda x, y: jaxsubset.rolling(x, y, 4.0, capacity=8),
        "rolling center": lambda x, y: jaxsubset.rolling(
            x, y, 4.0, capacity=4, center=True, closed="both"
        ),
        "rolling after": lambda x, y: jaxsubset.rolling(x, y, before=1.0, after=2.0, capacity=4),
        "rolling at": lambda x, y: jaxsubset.rolling(x, y, 3.0, at=at, capacity=8),
        "bins": lambda x, y: jaxsubset.bins(x, y, edges, capacity=8),
        "isolate": lambda x, y: jaxsubset.isolate(
            x, y, np.array([0, -3, 5]), np.array([4, n + 4, 2]), capacity=6
        ),
        "from_ranges": lambda x, y: jaxsubset.from_ranges(
            x, y, np.array([0, -3, 5, n - 1]), np.array([4, 9, 0, 10]), capacity=6
        ),
        "gather": lambda x, y: jaxsubset.gather(x, y, jaxsubset.ranges.chunks(x, 5)),
        "int rolling center": lambda _, y: jaxsubset.rolling(xi, y, 3, capacity=8, center=True),
        "int rolling float": lambda _, y: jaxsubset.rolling(xi, y, 2.5, capacity=8),
        "int select": lambda _, y: jaxsubset.select(xi, y, 2.5, 2**40, capacity=8),
        "int bins": lambda _, y: jaxsubset.bins(xi, y, np.array([0.5, 2, 7.5]), capacity=8),
    }


# 1 point (the edge cases) and a length past the first bucket (8192)
@pytest.mark.parametrize("n", [1, pytest.param(9000, marks=LARGE)])
def test_constructors_equal_unbucketed(n):
    x, y = _data(n, seed=8, channels=(2,))
    xi = x.astype(np.int32)
    cases = _constructors(x, xi, n)
    got = {name: f(x, y) for name, f in cases.items()}
    # the reference: every constructor unbucketed, in ONE jitted program (x traced, the
    # bounds constants as in the eager call; `gather`'s ranges from the traced x)
    want = jax.jit(lambda x, y: {name: f(x, y) for name, f in cases.items()})(x, y)
    for name in cases:
        _same_subsets(got[name], want[name])
        assert isinstance(got[name].x, jax.Array)
    # against NumPy: array_split pieces, and the first window of a sliding view
    for piece, ref in zip(np.asarray(got["chunks"].count), np.array_split(x, 7), strict=True):
        assert piece == len(ref)
    if n > 10:
        lo, hi = np.array([-1.0, 3.0, x[-1]]), np.array([2.0, 50.0, 1e9])
        ref = np.searchsorted(x, hi, "left") - np.searchsorted(x, lo, "left")
        np.testing.assert_array_equal(got["select"].count, ref)  # lo <= x < hi
        assert int(got["rolling"].count[-1]) == np.sum(x > x[-1] - 4.0)
        assert bool(np.asarray(got["rolling"].overflow).any())  # capacity 8 < a window


def test_constructors_on_a_time_axis_equal_unbucketed(monkeypatch):
    if not jax.config.jax_enable_x64:
        pytest.skip("time axes need JAX's 64-bit mode")
    t = np.datetime64("2024-01-01") + np.arange(300).astype("timedelta64[h]") * 3
    y = np.arange(300.0)
    cases = {
        "rolling": lambda: jaxsubset.rolling(t, y, "7h", capacity=8),
        "rolling at": lambda: jaxsubset.rolling(
            t, y, np.timedelta64(5, "h"), at=t[::7], capacity=8, center=True
        ),
        "select": lambda: jaxsubset.select(t, y, "2024-01-02", "2024-01-05", capacity=40),
        "bins": lambda: jaxsubset.bins(
            t,
            y,
            np.array(["2024-01-01", "2024-01-03", "2024-02-01"], "datetime64[D]"),
            capacity=500,
        ),
    }
    got = {name: f() for name, f in cases.items()}
    monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")  # dates are host values: no jit reference
    for name, f in cases.items():
        _same_subsets(got[name], f())


def test_constructors_compile_once_per_bucket():
    # every constructor: 1000, 1100 and 1200 points compile one program and nothing else
    # (no eager operation per length either); a length in the next bucket compiles again
    jax.clear_caches()
    calls = {
        "eager_gather": lambda x, y: (
            jaxsubset.chunks(x, y, 5),
            jaxsubset.chunks(x, y, size=10),
            jaxsubset.sliding(x, y, 4, step=3),
            jaxsubset.from_ranges(x, y, [1, 5], [3, 4], capacity=16),
            jaxsubset.isolate(x, y, 3, -4, capacity=16),
        ),
        "eager_select": lambda x, y: jaxsubset.select(x, y, 2.0, 50.0, capacity=64),
        "eager_windows": lambda x, y: (
            jaxsubset.rolling(x, y, 4.0, capacity=8),
            jaxsubset.rolling(x, y, 4.0, at=np.array([3.0, 500.0]), capacity=8),
        ),
        "eager_bins": lambda x, y: jaxsubset.bins(x, y, np.linspace(0, 900, 11), capacity=256),
    }
    counts: dict[str, list[int]] = {name: [] for name in calls}
    others = []
    for i, n in enumerate((1000, 1100, 1200, MIN_N + 100)):
        x, y = np.arange(n, dtype=FLOAT), np.ones(n, FLOAT)
        with compilations() as seen:
            for f in calls.values():
                jax.block_until_ready(f(x, y))
        for name in calls:
            counts[name].append(seen.of(name))
        if i in (1, 2):
            others += [s for s in seen if not any(name in s for name in calls)]
    assert counts["eager_select"] == counts["eager_bins"] == [1, 0, 0, 1]
    assert counts["eager_windows"] == [2, 0, 0, 2]  # one window per point; at anchors
    assert counts["eager_gather"][1:3] == [0, 0] and counts["eager_gather"][3] > 0
    assert others == []


def test_constructors_under_jit_or_with_length_are_not_padded():
    x, y = _data(1000, seed=9)
    with compilations() as seen:
        jax.jit(lambda x, y: jaxsubset.chunks(x, y, 5).mean())(x, y)
        jax.jit(lambda x, y: jaxsubset.select(x, y, 1.0, 9.0, capacity=8).x)(x, y)
        jaxsubset.chunks(x, y, 5, length=900)  # a traced-style `length`: the caller's shapes
    assert not any(name.startswith(("jit(_padded", "jit(eager_")) for name in seen), seen


# ---------------------------------------------------------------------------- number of bins
def test_binned_statistic_number_of_bins_is_bucketed():
    scipy_stats = pytest.importorskip("scipy.stats")
    x, y = _data(2000, seed=10)
    y = np.nan_to_num(y)
    x = x / x[-1] * 10.0
    x[-5:] = [10.0, 10.0, 10.5, 11.0, np.inf]  # on the last edge, above it, +inf
    x = np.sort(x)
    cases = [(k, s) for k in (10, 11, 12) for s in ("mean", "std", "median")]
    rng = (0.0, 10.0)
    got = {c: jaxsubset.binned_statistic(x, y, c[1], bins=c[0], range=rng) for c in cases}
    want = jax.jit(
        lambda x, y: {
            c: jaxsubset.binned_statistic(x, y, c[1], bins=c[0], range=rng, x_sorted=True)
            for c in cases
        }
    )(x, y)
    for c in cases:
        # sorted x by whole blocks: the bucket's blocks sum in another order than the real
        # shape's (the rounding of a sum; the median is the same bits)
        same_statistic(c[1], got[c].statistic, want[c].statistic)
        same(got[c].binnumber, want[c].binnumber)
        same(got[c].bin_edges, want[c].bin_edges)
        ref = scipy_stats.binned_statistic(x, y, c[1], bins=got[c].bin_edges)  # SciPy: no inf

        np.testing.assert_array_equal(got[c].binnumber, ref.binnumber)  # c[0] + 1 above
        np.testing.assert_allclose(got[c].statistic, ref.statistic, rtol=1e-4, atol=1e-6)
    assert got[(10, "mean")].binnumber[-3:].tolist() == [11, 11, 11]
    # 13, 14, 15 bins (int bins, explicit edges; unsorted x): one program each
    xu = np.random.default_rng(11).permutation(x[:-1])
    jax.clear_caches()
    for bins_of in (lambda k: k, lambda k: np.linspace(-1.0, 12.0, k + 1)):
        with compilations() as seen:
            for k in (13, 14, 15):
                jaxsubset.binned_statistic(xu, y[:-1], "std", bins=bins_of(k), range=rng)
        assert seen.of("_binned_core") == 1


# ------------------------------------------------- bins of every x, many bounds, ranges.*
def _once_per_bucket(calls, sizes, program: str | None = None) -> list[int]:
    """Compilations of each call in turn; with ``program``: of that program only (and then
    nothing else may compile after the first call)."""
    counts = []
    for i, arg in enumerate(sizes):
        with compilations() as seen:
            jax.block_until_ready(jax.tree_util.tree_leaves(calls(arg)))
        counts.append(len(seen) if program is None else seen.of(program))
        if program is not None and i > 0:
            assert seen == [], seen
    return counts


def _sum_fn(v, m):
    return jnp.sum(jnp.where(m, v, 0))


def _binned_x(n, seed, kind):
    x, y = _data(n, seed=seed)
    y = np.nan_to_num(y)
    if kind == "int":
        return x.astype(np.int32), y
    if kind == "time":
        return np.datetime64("2024-01-01") + x.astype("timedelta64[m]"), y
    return x, y


@pytest.mark.parametrize("kind", ["int", "time"])
def test_binned_statistic_bins_of_every_kind_are_bucketed(kind, monkeypatch):
    if kind == "time" and not jax.config.jax_enable_x64:
        pytest.skip("time axes need JAX's 64-bit mode")
    x, y = _binned_x(700, 12, kind)
    fn = _sum_fn if kind == "callable" else None
    lo, hi = (np.asarray(jaxsubset.to_ns(x[[0, -1]])) if kind == "time" else x[[0, -1]]).tolist()
    edges = np.linspace(lo + 0.01 * (hi - lo), hi - 0.1 * (hi - lo), 6)
    if kind == "time":
        edges = edges.astype(np.int64).view("datetime64[ns]")

    def calls():
        # 11 and 13 bins, explicit edges with points above the last one
        out = {
            (k, s): jaxsubset.binned_statistic(x, y, fn or s, bins=k)
            for k in (11, 13)
            for s in (("mean", "median") if fn is None else ("f",))
        }
        out["edges"] = jaxsubset.binned_statistic(x, y, fn or "max", bins=edges)
        return out

    got = calls()
    monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")  # the reference: one program per call
    want = calls()
    monkeypatch.delenv("JAXSUBSET_BUCKETS")
    for c in got:
        # sorted x by whole blocks: a bucket's blocks sum in another order (rounding of a sum)
        same_statistic(c[1] if isinstance(c, tuple) else "max", got[c].statistic, want[c].statistic)
        same(got[c].binnumber, want[c].binnumber)
        same(got[c].bin_edges, want[c].bin_edges)
    assert int(np.max(got["edges"].binnumber)) == 6  # points above the last edge
    # one program for 10, 11, 12 bins; int x in 32-bit mode: 13, 14, 15 equal bins, whose
    # edges float32 cannot hold (as 10 and 11, not 12), are binned as in 64-bit mode in one
    # program of their own (jaxsubset.resolve._exact.binned_once), one for the bucket
    wide = kind == "int" and not jax.config.jax_enable_x64
    jax.clear_caches()
    counts = _once_per_bucket(
        lambda k: jaxsubset.binned_statistic(x, y, fn or "mean", bins=k),
        (13, 14, 15) if wide else (10, 11, 12),
        "_binned_core",
    )
    assert counts == [1, 0, 0]


def test_binned_statistic_lengths_compile_once_for_every_kind():
    # default range (min/max on the host), values=None, integer x, a callable: lengths in one
    # bucket compile nothing after the first
    jax.clear_caches()
    for kind, stat in (("float", "count"), ("int", "std"), ("callable", None)):
        fn = _sum_fn if kind == "callable" else None

        def call(n, kind=kind, stat=stat, fn=fn):
            x, y = _binned_x(n, n, kind)
            v = None if stat == "count" else y
            return jaxsubset.binned_statistic(
                x, v, fn or stat, bins=9, capacity=512 if fn else None
            )

        counts = _once_per_bucket(call, (1000, 1100, 1200))
        assert counts[0] >= 1 and counts[1:] == [0, 0], (kind, counts)
    if jax.config.jax_enable_x64:  # a time axis; a period's number of bins follows the data

        def period(n):
            x, y = _binned_x(n, n, "time")
            return jaxsubset.binned_statistic(x, y, "mean", bins="1D")

        assert _once_per_bucket(period, (3000, 3300, 3600))[1:] == [0, 0]


def test_select_with_many_bounds_is_bucketed():
    x, y = _data(1000, seed=13)
    jax.clear_caches()

    def call(k):
        lo = np.linspace(-5.0, x[-1], k)
        return jaxsubset.select(x, y, lo, lo + 30.0, capacity=64)

    assert _once_per_bucket(call, (10, 11, 12, 40), "eager_select") == [1, 0, 0, 0]
    # the result is the unpadded one (2-D bounds, broadcast against a scalar)
    lo = np.linspace(-5.0, x[-1], 12).reshape(3, 4)
    got = jaxsubset.select(x, y, lo, 50.0, capacity=64, closed="both")
    want = jax.jit(lambda x, y: jaxsubset.select(x, y, lo, 50.0, capacity=64, closed="both"))(x, y)
    _same_subsets(got, want)
    assert got.batch_shape == (3, 4)
    ref = np.searchsorted(x, 50.0, "right") - np.searchsorted(x, lo, "left")
    np.testing.assert_array_equal(got.count, np.maximum(ref, 0))


def _ranges_calls(x, n):
    top = float(x[-1])
    widths = np.linspace(1.0, 6.0, n).astype(x.dtype)
    return {
        "select": lambda x: jaxsubset.ranges.select(x, np.array([-1.0, 3.0, top]), 50.0),
        "select scalar": lambda x: jaxsubset.ranges.select(x, 2.0, top, closed="both"),
        "bins": lambda x: jaxsubset.ranges.bins(
            x, np.array([-1.0, 2.0, 2.0, 10.0, max(top, 10.0)])
        ),
        "rolling": lambda x: jaxsubset.ranges.rolling(x, 4.0),
        "rolling center": lambda x: jaxsubset.ranges.rolling(x, 4.0, center=True),
        "rolling at": lambda x: jaxsubset.ranges.rolling(x, 3.0, at=np.array([0.0, top, 1e9])),
        "rolling widths": lambda x: jaxsubset.ranges.rolling(x, widths, closed="both"),
        "sliding": lambda x: jaxsubset.ranges.sliding(x, min(3, n), step=2),
        "isolate": lambda x: jaxsubset.ranges.isolate(x, np.array([0, -3, 5]), n + 4),
    }


@pytest.mark.parametrize("n", [1, 1000])
def test_index_ranges_equal_unbucketed(n):
    x, _ = _data(n, seed=14)
    calls = _ranges_calls(x, n)
    got = {name: f(x) for name, f in calls.items()}
    want = jax.jit(lambda x: {name: f(x) for name, f in calls.items()})(x)
    for name in calls:
        same(got[name].start, want[name].start)
        same(got[name].count, want[name].count)
        assert got[name].max_count == want[name].max_count
    if n > 10:  # against NumPy: the trailing windows of width 4 (pandas' rule, no ties here)
        xs = np.arange(n, dtype=FLOAT)
        r = jaxsubset.ranges.rolling(xs, 4.0)
        np.testing.assert_array_equal(r.start, np.maximum(np.arange(n) - 3, 0))


def test_index_ranges_compile_once_per_bucket():
    jax.clear_caches()

    def call(n):
        x, _ = _data(n, seed=n)
        return [f(x) for f in _ranges_calls(x, n).values()]

    counts = _once_per_bucket(call, (1000, 1100, 1200))
    assert counts[0] > 0 and counts[1:] == [0, 0]
    # and range_statistic on them: one program per bucket, nothing else
    x, y = _data(1000, seed=15)
    with compilations() as seen:
        for k in (10, 11, 12):
            lo = np.linspace(0.0, 900.0, k)
            jaxsubset.range_statistic(y, jaxsubset.ranges.select(x, lo, lo + 20.0), "mean")
    assert len(seen) <= 2 and seen.of("eager_reduce") <= 1


def test_rolling_with_array_widths_is_bucketed():
    x, y = _data(1000, seed=16)
    w = (0.5 + np.abs(np.sin(np.arange(1000.0))) * 6).astype(FLOAT)
    at = np.array([[3.0, 50.0], [x[-1], 1e9]], FLOAT)
    wa = np.array([1.0, 8.0], FLOAT)
    cases = {
        "widths": lambda x, y: jaxsubset.rolling(x, y, w, capacity=8),
        "before after": lambda x, y: jaxsubset.rolling(x, y, before=w, after=1.0, capacity=16),
        "at widths": lambda x, y: jaxsubset.rolling(x, y, wa, at=at, capacity=8, center=True),
    }
    got = {name: f(x, y) for name, f in cases.items()}
    want = jax.jit(lambda x, y: {name: f(x, y) for name, f in cases.items()})(x, y)
    for name in cases:
        _same_subsets(got[name], want[name])
    ref = [np.sum((x > x[i] - w[i]) & (np.arange(1000) <= i)) for i in range(60)]
    np.testing.assert_array_equal(np.asarray(got["widths"].count)[:60], ref)
    jax.clear_caches()

    def call(n):
        x, y = _data(n, seed=n)
        return jaxsubset.rolling(x, y, np.full(n, 3.0, FLOAT), capacity=8)

    assert _once_per_bucket(call, (1000, 1100, 1200), "eager_windows") == [1, 0, 0]


def test_chunks_number_of_pieces_shares_programs():
    x, y = _data(1000, seed=17)
    # 11 and 12 pieces: slots bucket(ceil(8192 / n)) = 768 both; the pieces are array_split's
    with compilations() as seen:
        got = [jaxsubset.chunks(x, y, k) for k in (11, 12)]
    assert seen.of("eager_gather") == 1
    for k, s in zip((11, 12), got, strict=True):
        np.testing.assert_array_equal(s.count, [len(p) for p in np.array_split(x, k)])
        assert s.capacity == -(-1000 // k)


def test_nearest_and_dynamic_are_bucketed(monkeypatch):
    x, y = _data(1000, seed=18, channels=(2,))
    values = np.array([[-5.0, 3.3], [x[-1] / 2, 1e9]], FLOAT)
    calls = {
        "nearest": lambda: jaxsubset.nearest(x, values),
        "nearest scalar": lambda: jaxsubset.nearest(x, 17.4),
        "dynamic": lambda: jaxsubset.dynamic(x, y, 50.0, period=80.0, capacity=64),
    }
    got = {name: f() for name, f in calls.items()}
    monkeypatch.setenv("JAXSUBSET_BUCKETS", "off")  # the reference: the unpadded programs
    want = {name: f() for name, f in calls.items()}
    monkeypatch.delenv("JAXSUBSET_BUCKETS")
    for name in ("nearest", "nearest scalar"):
        same(got[name], want[name])
    _same_subsets(got["dynamic"], want["dynamic"])
    # against NumPy: the nearest sample, ties to the lower index
    np.testing.assert_array_equal(
        np.asarray(got["nearest"]).ravel()[:2], [0, int(np.argmin(np.abs(x - 3.3)))]
    )
    jax.clear_caches()

    def call(n):
        x, y = _data(n, seed=n)
        return (
            jaxsubset.nearest(x, np.linspace(0.0, x[-1], n // 100)),
            jaxsubset.dynamic(x, y, 50.0, capacity=64),
        )

    counts = _once_per_bucket(call, (1000, 1100, 1200))
    assert counts[0] > 0 and counts[1:] == [0, 0]


def test_eager_windows_search_as_the_guided_search_does(monkeypatch):
    """Eager one-window-per-row calls on fewer than ``GUIDED_EAGER`` points search their
    bounds with the plain search (a smaller program), jitted ones on ``GUIDED_MIN`` points or
    more with the guided search of sorted bounds: the same windows, on ties, irregular steps,
    every ``closed`` and centred or asymmetric windows, against NumPy's searchsorted too."""
    from jaxsubset.resolve import _search

    rng = np.random.default_rng(11)
    n = 3000  # more than 2 * ANCHOR bounds
    monkeypatch.setattr(_search, "GUIDED_MIN", n)  # (the guided search runs under jit)
    x = np.cumsum(rng.choice([0.0, 0.0, 0.5, 1.0, 7.0], n)).astype(FLOAT)
    cases = [dict(width=3.0, closed=c) for c in ("right", "left", "both", "neither")]
    cases += [dict(width=4.0, center=True), dict(before=2.0, after=1.5, closed="both")]

    def every(x):
        return [jaxsubset.ranges.rolling(x, **kw) for kw in cases]

    searched = []
    real = _search.sorted_search
    monkeypatch.setattr(_search, "sorted_search", lambda *a: searched.append(1) or real(*a))
    got = every(x)
    assert not searched  # eager, below GUIDED_EAGER: the plain search
    want = jax.jit(every)(x)
    assert searched  # traced: the guided one
    searched.clear()
    monkeypatch.setattr(_search, "GUIDED_MIN", n + 1)
    small = jax.jit(lambda x: every(x))(x)  # (a new function: traced anew)
    assert not searched  # traced, fewer than GUIDED_MIN bounds: the plain search
    for g, w in zip(small, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g.start), np.asarray(w.start))
        np.testing.assert_array_equal(np.asarray(g.count), np.asarray(w.count))
    for kw, g, w in zip(cases, got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g.start), np.asarray(w.start), err_msg=str(kw))
        np.testing.assert_array_equal(np.asarray(g.count), np.asarray(w.count), err_msg=str(kw))
    # pandas' trailing window x[i] - 3 < x <= x[i], ending at row i (ties after it are out)
    start = np.minimum(np.searchsorted(x, x - 3.0, "right"), np.arange(n))
    np.testing.assert_array_equal(np.asarray(got[0].start), start)
    np.testing.assert_array_equal(np.asarray(got[0].count), np.arange(n) + 1 - start)


@pytest.mark.parametrize(
    ("dtype", "shape", "fill"),
    [(np.float64, (1000,), 7.5), (np.float32, (999, 3), np.nan), (np.int64, (10,), -1),
     (np.bool_, (33,), False), (np.float64, (MIN_N,), 0.0)],
)  # fmt: skip
def test_host_padding_is_the_rows_then_the_fill_in_the_modes_dtype(dtype, shape, fill):
    """``pad`` of host data: the rows (cast as ``jax.device_put`` casts them in this mode),
    then ``fill``, in a private buffer (the caller's array may change afterwards) aligned
    so that the CPU device takes it without a copy."""
    rng = np.random.default_rng(8)
    a = (rng.normal(size=shape) * 1e3).astype(dtype)
    size = bucket(shape[0] + 1) if shape[0] < MIN_N else shape[0]
    got = _bucket.pad(a, size, fill=fill)
    want = np.asarray(
        jax.device_put(np.concatenate([a, np.full((size - shape[0],) + shape[1:], fill, dtype)]))
    )
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)
    if size > shape[0]:  # (no padding: device_put's own rule, which may alias an array)
        a[...] = 1  # the caller's array changes: the padded copy does not
        np.testing.assert_array_equal(np.asarray(got), want)
    buf = _bucket.aligned_empty((5, 3), np.float32)
    assert buf.ctypes.data % _bucket.ALIGN == 0 and buf.shape == (5, 3)
    if jax.default_backend() == "cpu":  # the property the eager calls' speed relies on
        assert jax.device_put(buf).unsafe_buffer_pointer() == buf.ctypes.data
    # cuts of a result on the host: the leading rows, and the leading slots of every row
    h = np.asarray(got)
    for cut in (h[:5], h[: shape[0] // 2, ...], h[3:], h.reshape(h.shape[0], -1)[:, :1]):
        out = _bucket.put(cut)
        assert out.dtype == cut.dtype and out.shape == cut.shape
        np.testing.assert_array_equal(np.asarray(out), cut)
