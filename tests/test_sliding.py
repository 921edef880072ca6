"""rolling_statistic(..., window=w): fixed-count windows on the block road (van Herk).

Against pandas ``Series.rolling(w, min_periods=...)``, bottleneck ``move_*`` and NumPy
slices; against the tree road (``method="tree"``); pollution-free; jit/vmap/grad; few
compilations (one call asks for many statistics).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import jaxsubset
from checks import compile_and_check, vmap_and_check
from jaxsubset._native import usable as native_usable
from jaxsubset._statistics import _sliding, _sliding_folds
from jaxsubset.reduce import road as choose


BLOCKS = ("count", "sum", "mean", "var", "std", "sem", "min", "max")
X64 = bool(jax.config.read("jax_enable_x64"))
RTOL = 1e-9 if X64 else 2e-4


def _data(n: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.normal(3.0, 2.0, (n, 2))
    y[rng.random((n, 2)) < 0.1] = np.nan
    y[40:60, 1] = np.nan  # a run of NaN longer than the short windows
    return y


def _pandas(y: np.ndarray, w: int, min_periods: int, center: bool = False) -> dict:
    out: dict[str, list] = {s: [] for s in BLOCKS}
    for c in range(y.shape[1]):
        r = pd.Series(y[:, c]).rolling(w, min_periods=min_periods, center=center)
        cnt = r.count().to_numpy()
        out["count"].append(cnt)
        out["sum"].append(r.sum().to_numpy())
        out["mean"].append(r.mean().to_numpy())
        out["var"].append(r.var(ddof=1).to_numpy())
        out["std"].append(r.std(ddof=1).to_numpy())
        out["sem"].append(r.sem(ddof=1).to_numpy())
        out["min"].append(r.min().to_numpy())
        out["max"].append(r.max().to_numpy())
    return {k: np.stack(v, axis=1) for k, v in out.items()}


def _close(got, want, name, rtol=RTOL):
    got, want = np.asarray(got, float), np.asarray(want, float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{name}: NaN places")
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=name)


@pytest.mark.parametrize("w", [1, 7, 100, 300, 450])
def test_against_pandas_omit(w):
    """pandas' rolling(w, min_periods=1) with NaN skipped; w = 1, w = N and w > N included."""
    y = _data()
    if not X64:
        y = y.astype(np.float32)
    got = jaxsubset.rolling_statistic(None, y, statistic=BLOCKS, window=w, ddof=1)
    want = _pandas(y.astype(np.float64), w, 1)
    for s in BLOCKS:
        _close(got[s], want[s], f"{s} w={w}")
    assert got["count"].dtype == y.dtype  # NaN below min_periods, as the x-width windows


def test_pandas_default_min_periods_and_center():
    """pandas' rolling(w) (min_periods=w) and rolling(w, center=True), odd and even w."""
    y = _data(120)
    for w, center in ((10, False), (9, True), (10, True)):
        got = jaxsubset.rolling_statistic(
            None, y, statistic=("mean", "std", "max"), window=w, min_periods=w, ddof=1,
            center=center,
        )  # fmt: skip
        want = _pandas(y, w, w, center=center)
        for s in ("mean", "std", "max"):
            _close(got[s], want[s], f"{s} w={w} center={center}")


def test_against_bottleneck_and_slices():
    """bottleneck's move_* (1-D, no NaN) and a hand window from NumPy slices, ddof 0."""
    bn = pytest.importorskip("bottleneck")
    rng = np.random.default_rng(1)
    y = rng.normal(size=500).astype(np.float64 if X64 else np.float32)
    w = 37
    got = jaxsubset.rolling_statistic(
        None, y, statistic=("mean", "std", "var", "min", "max", "sum"), window=w
    )
    for s in ("mean", "std", "var", "min", "max", "sum"):
        _close(got[s], getattr(bn, f"move_{s}")(y, w, min_count=1), f"bottleneck {s}")
    i = 300
    win = y[i - w + 1 : i + 1]
    assert np.isclose(float(got["var"][i]), np.var(win), rtol=RTOL)
    assert float(got["min"][i]) == win.min() and float(got["max"][i]) == win.max()


def test_propagate():
    """nan_policy='propagate': a window holding a NaN is NaN; count counts every row."""
    y = _data(200)
    w = 20
    got = jaxsubset.rolling_statistic(None, y, statistic=BLOCKS, window=w, nan_policy="propagate")
    held = pd.DataFrame(np.isnan(y)).rolling(w, min_periods=1).sum().to_numpy() > 0
    want = _pandas(y, w, 1)
    for s in ("sum", "mean", "min", "max"):
        _close(got[s], np.where(held, np.nan, want[s]), f"propagate {s}")
    rows = np.minimum(np.arange(200) + 1, w)
    np.testing.assert_array_equal(np.asarray(got["count"]), np.stack([rows, rows], 1))


def test_equals_tree_and_fallbacks(monkeypatch):
    """The block road equals the tree road on random data; median and skew fall back."""
    y = _data(257, seed=3)
    w = 50
    stats = (*BLOCKS, "median", "skew")
    got = jaxsubset.rolling_statistic(None, y, statistic=stats, window=w)
    tree = jaxsubset.rolling_statistic(
        None, y, statistic=(*BLOCKS, "skew"), window=w, method="tree"
    )
    for s in (*BLOCKS, "skew"):
        _close(got[s], tree[s], f"tree {s}", rtol=1e-12 if X64 else 1e-5)
    med = pd.DataFrame(y).rolling(w, min_periods=1).median().to_numpy()
    _close(got["median"], med, "median")
    # the pure-JAX roads' choice (on the CPU the native road takes them where built)
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")
    assert choose("sliding", "mean", "auto", "f") == "blocks"
    assert choose("sliding", "median", "auto", "f") == "wavelet"
    assert choose("sliding", "skew", "auto", "f") == "tree"


def test_float32_offsets_and_step():
    """float32: 1e4 + noise keeps its std; a step inside a sub-block costs no digits."""
    rng = np.random.default_rng(4)
    noise = rng.normal(size=2000)
    y = np.stack([1e4 + noise, np.where(np.arange(2000) < 1005, 0.0, 1e4 + noise)], 1)
    w = 100
    got = jaxsubset.rolling_statistic(None, y.astype(np.float32), statistic="std", window=w)
    ref = (
        pd.DataFrame(y.astype(np.float32).astype(np.float64)).rolling(w, min_periods=1).std(ddof=0)
    )
    np.testing.assert_allclose(np.asarray(got)[w:], ref.to_numpy()[w:], rtol=2e-3, atol=1e-3)
    # the windows entirely after the step see only 1e4 + noise
    after = np.asarray(got)[1005 + w :, 1]
    np.testing.assert_allclose(after, ref.to_numpy()[1005 + w :, 1], rtol=2e-3)


@pytest.mark.skipif(not X64, reason="1e8 + noise needs float64")
def test_float64_step_1e8():
    """0s, then 1e8 + noise from the middle of a sub-block: the windows after the step."""
    rng = np.random.default_rng(5)
    y = np.where(np.arange(3000) < 1509, 0.0, 1e8 + rng.normal(size=3000))
    w = 300
    got = np.asarray(jaxsubset.rolling_statistic(None, y, statistic="std", window=w))
    ref = pd.Series(y).rolling(w).std(ddof=0).to_numpy()
    two_pass = np.array([np.std(y[i - w + 1 : i + 1]) for i in range(1509 + w, 3000, 97)])
    np.testing.assert_allclose(got[1509 + w :: 97], two_pass, rtol=1e-9)
    np.testing.assert_allclose(got[w:1509], 0.0, atol=0)
    del ref


def test_pollution_free():
    """A -9e33 (float32), an inf or a NaN at index 2 changes only the windows holding it."""
    n, w = 200, 20
    y = np.zeros((n, 3), np.float32)
    y[2] = (-9e33, np.inf, np.nan)
    got = jaxsubset.rolling_statistic(
        None, y, statistic=("sum", "mean", "std", "min", "max"), window=w
    )
    far = slice(2 + w, n)  # windows without index 2
    for s in ("sum", "mean", "std", "min", "max"):
        np.testing.assert_array_equal(np.asarray(got[s])[far], 0.0, err_msg=s)
    held = slice(2, 2 + w)
    np.testing.assert_array_equal(np.asarray(got["sum"])[held, 0], np.float32(-9e33))
    np.testing.assert_array_equal(np.asarray(got["sum"])[held, 1], np.inf)
    assert np.isnan(np.asarray(got["std"])[held, 1]).all()  # inf - inf
    np.testing.assert_array_equal(np.asarray(got["sum"])[held, 2], 0.0)  # NaN omitted


def test_dtypes():
    """int, bool and float16 y compute in the default float / float32, as reduce_ranges."""
    y = np.arange(40) % 7
    got = jaxsubset.rolling_statistic(None, y, statistic=("mean", "max"), window=5)
    ref = pd.Series(y.astype(float)).rolling(5, min_periods=1)
    _close(got["mean"], ref.mean(), "int mean")
    _close(got["max"], ref.max(), "int max")
    assert got["mean"].dtype == jnp.result_type(float)
    b = jaxsubset.rolling_statistic(None, y > 3, statistic="sum", window=5)
    _close(b, pd.Series((y > 3).astype(float)).rolling(5, min_periods=1).sum(), "bool sum")
    h = jaxsubset.rolling_statistic(None, y.astype(np.float16), statistic="mean", window=5)
    assert h.dtype == jnp.float16
    np.testing.assert_allclose(np.asarray(h, float), ref.mean(), rtol=1e-3)


def test_neutral_sums(monkeypatch):
    """Off the CPU the sub-block sums are cumulative sums: the same results."""
    y = jnp.asarray(_data(90))
    cpu = _sliding.sliding_statistics(y, 90, window=33, stats=BLOCKS, ddof=1, omit=True)
    monkeypatch.setattr(_sliding_folds, "backend", lambda: "gpu")
    jax.clear_caches()
    other = _sliding.sliding_statistics(y, 90, window=33, stats=BLOCKS, ddof=1, omit=True)
    jax.clear_caches()
    for s in BLOCKS:
        _close(other[s], cpu[s], f"cumsum {s}", rtol=1e-12 if X64 else 1e-5)


def test_jit_vmap_grad_no_recompile():
    """Under jit (w static, y traced), vmap over a batch, grad equal to the tree's."""
    rng = np.random.default_rng(6)
    ys = [jnp.asarray(rng.normal(size=(64, 2))) for _ in range(3)]

    def f(y):
        return jaxsubset.rolling_statistic(None, y, statistic=("mean", "std", "max"), window=9)

    compile_and_check(f, [(y,) for y in ys])
    vmap_and_check(lambda y: jaxsubset.rolling_statistic(None, y, statistic="std", window=9),
                   [np.stack(ys)])  # fmt: skip

    def loss(y, method):
        return jnp.sum(
            jaxsubset.rolling_statistic(None, y, statistic="mean", window=9, method=method)
        )

    g = jax.grad(loss)(ys[0], "auto")
    assert np.isfinite(np.asarray(g)).all()
    np.testing.assert_allclose(g, jax.grad(loss)(ys[0], "tree"), rtol=1e-6)


def test_errors():
    y = np.zeros(10)
    f = jaxsubset.rolling_statistic
    with pytest.raises(ValueError, match="`window`.*cannot be combined with `width`"):
        f(np.arange(10.0), y, 2.0, window=3)
    with pytest.raises(ValueError, match="`before`, `after`"):
        f(None, y, before=1.0, after=1.0, window=3)
    with pytest.raises(ValueError, match="`window` must be a positive int, got 0"):
        f(None, y, window=0)
    with pytest.raises(TypeError, match="`window` must be a Python int"):
        f(None, y, window=2.5)
    with pytest.raises(ValueError, match="`closed` must be 'right'"):
        f(None, y, window=3, closed="left")
    with pytest.raises(ValueError, match="same length"):
        f(np.arange(9.0), y, window=3)
    with pytest.raises(ValueError, match="method='blocks' cannot compute 'median'"):
        f(None, y, statistic="median", window=3, method="blocks")
    with pytest.raises(ValueError, match="`method` must be one of"):
        f(np.arange(10.0), y, 2.0, method="blocks")
    with pytest.raises(TypeError, match="`x` is needed"):
        f(None, y, 2.0)


def test_evenly_spaced_x_width_windows_take_the_block_road(monkeypatch):
    """Eager x-width windows on evenly spaced x (a width a multiple of the step) are
    fixed-count windows: ``choose_windows`` sends them to the block road, with the same
    windows (closed=, centred and asymmetric ones, shorter at the ends, min_periods) and the
    same results as the x-width road; irregular x, ties and forced roads keep the ranges."""
    from jaxsubset import _rolling_stats
    from jaxsubset.reduce import Request, choose as choose_call

    def layout(method, fixed):
        start = np.maximum(np.arange(20) - 3, 0) if fixed else np.arange(20) % 3
        count = np.arange(20) + 1 - start
        req = Request("f", "windows", ("mean",), method)
        return choose_call(req, k=20, n=20, windows=(start, count)).layout

    assert layout("auto", True) == "sliding"
    assert layout("tree", True) == layout("auto", False) == "ranges"
    seen = []
    real = _rolling_stats._rolling_window

    def spy(*args, **kwargs):
        seen.append((args[1], kwargs.get("lead")))
        return real(*args, **kwargs)

    monkeypatch.setattr(_rolling_stats, "_rolling_window", spy)
    n = 60
    x = (np.arange(n) * 0.5 + 3.0).astype(np.float64)
    y = _data(n)
    names = ("count", "mean", "std", "max")
    # (trailing windows go to the native x-width kernel, which finds them fixed-count itself
    # where every row is present, and centred and before/after ones too (its queue): no
    # host chooser, no block road here; in 32-bit mode too, float64 host x runs the call
    # whole as in 64-bit mode, resolve._exact.once64)
    kernel = native_usable()
    cases = [  # (widths, closed, (w, lead) of the fixed-count windows or None): one w, one program
        (dict(width=5.0), "right", None if kernel else (10, 0)),
        (dict(width=5.0, center=True), "right", None if kernel else (10, 5)),
        (dict(before=2.0, after=2.5), "both", None if kernel else (10, 5)),
    ]
    for kw, closed, fixed in cases:
        seen.clear()
        got = jaxsubset.rolling_statistic(x, y, statistic=names, closed=closed, min_periods=3,
                                          ddof=1, **kw)  # fmt: skip
        assert seen == ([] if fixed is None else [fixed]), (kw, closed, seen)
        want = jaxsubset.rolling_statistic(x, y, statistic=names, closed=closed,
                                           min_periods=3, ddof=1, method="tree", **kw)  # fmt: skip
        for s in names:
            rtol = 0 if s in ("count", "max") else RTOL
            np.testing.assert_allclose(np.asarray(got[s]), np.asarray(want[s]), rtol=rtol,
                                       err_msg=f"{kw} {closed} {s}")  # fmt: skip
    # windows that are not fixed-count ones keep the ranges: ending a row early (closed="left"
    # on this x), a tie (the window of row 10 ends at row 10, pandas' rule), empty windows
    from jaxsubset.reduce import fixed_count

    pos = np.arange(n)
    assert fixed_count(np.maximum(pos - 10, 0), np.minimum(pos, 10)) is None
    start, count = np.maximum(pos - 9, 0), np.minimum(pos + 1, 10)
    assert fixed_count(start, count) == (10, 0)
    count[10] -= 1
    assert fixed_count(start, count) is None
    assert fixed_count(pos, np.zeros(n, int)) is None


def test_chunks_give_the_same_bits(monkeypatch):
    """A long series runs chunk by chunk (each chunk read with the rows its windows reach
    back to, on the same sub-block boundaries): the same results as one piece, with NaN,
    inf, a huge value, absent rows (eager bucket padding, a centred window) and
    ``min_periods``. Bit for bit, except the moments of a chunk that holds no NaN/inf when
    the whole series does: the program without the NaN/inf folds runs there, whose
    multiply-adds the compiler may contract differently (a few ulps; zeros and NaN equal)."""
    # the pure-JAX block road itself (on the CPU the native road takes these windows)
    monkeypatch.setenv("JAXSUBSET_NATIVE", "off")
    y = _data(2100, seed=7)
    y[700, 0], y[1300, 1], y[1500, 0] = np.inf, -np.inf, -9e30 if X64 else -9e15
    y[1000:1700, 1] = 5.0  # a constant run across chunks: exactly 0 spread
    if not X64:
        y = y.astype(np.float32)
    names = ("count", "mean", "std", "min")  # every fold: sums, moments, extrema, counts
    calls = [
        dict(window=200, nan_policy="propagate"),  # jit: every row present
        dict(window=37, ddof=1, min_periods=30, center=True),  # eager: absent rows
    ]

    def run():
        jax.clear_caches()
        f = jax.jit(lambda y: jaxsubset.rolling_statistic(None, y, statistic=names, **calls[0]))
        return [f(y), jaxsubset.rolling_statistic(None, y, statistic=names, **calls[1])]

    whole = run()
    ran = []
    real = _sliding.chunked

    def spy(*args):
        out = real(*args)
        ran.append(out is not None)
        return out

    monkeypatch.setattr(_sliding, "chunked", spy)
    monkeypatch.setattr(_sliding, "CHUNK", 512)  # chunks and a tail
    chunks = run()
    jax.clear_caches()
    assert ran == [True, True]
    for kw, a, b in zip(calls, whole, chunks, strict=True):
        for s in names:
            got, want = np.asarray(b[s]), np.asarray(a[s])
            if s == "std":
                np.testing.assert_array_equal(got == 0, want == 0, err_msg=f"{kw} {s}")
                _close(got, want, f"{kw} {s}", rtol=8 * np.finfo(y.dtype).eps)
            else:
                np.testing.assert_array_equal(got, want, err_msg=f"{kw} {s}")
    assert (np.asarray(whole[1]["std"])[1100:1600, 1] == 0).all()
    assert (np.asarray(chunks[0]["count"])[-300:] == 200).all()  # the last rows too


@pytest.mark.parametrize("method", ["blocks", "auto"])
def test_host_data_known_finite_compile_the_finite_program_only(monkeypatch, method):
    """Eager ``window=`` calls on host data that hold no NaN/inf run the block road's program
    without its NaN/inf branch (a smaller program) with the results of the program that
    decides at run time (under ``jit``); data holding a NaN or an inf, and traced data, keep
    the run-time decision. The native kernel has no such branch: calls it takes all the way
    (``"auto"`` on the CPU) never read y on the host for it."""
    from jaxsubset import _rolling_stats

    seen = []
    real = _rolling_stats.window_program

    def spy(*args, **kwargs):
        seen.append(kwargs.get("finite", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(_rolling_stats, "window_program", spy)
    rng = np.random.default_rng(3)
    finite = rng.normal(3.0, 2.0, (200, 2))
    holed = finite.copy()
    holed[17, 1] = np.inf
    with_nan = _data(200)
    ints = rng.integers(-5, 5, (200, 2))
    names = ("count", "sum", "mean", "std", "min", "max")

    def call(y):
        return jaxsubset.rolling_statistic(
            None, y, statistic=names, window=40, min_periods=3, method=method
        )

    read = method == "blocks" or not native_usable()
    for y, known in ((finite, True), (holed, False), (with_nan, False), (ints, True)):
        seen.clear()
        got = call(y)
        assert seen == [known and read]
        want = jax.jit(call)(jnp.asarray(y))  # traced: the run-time decision
        for s in names:
            a, b = np.asarray(got[s]), np.asarray(want[s])
            if s == "std":  # a different program: the moments to the last bits
                np.testing.assert_allclose(a, b, rtol=4 * np.finfo(a.dtype).eps)
            else:
                np.testing.assert_array_equal(a, b, err_msg=s)
    # against pandas on the finite data (the program that skips the NaN/inf counts)
    ref = pd.Series(finite[:, 0]).rolling(40, min_periods=3)
    _close(np.asarray(call(finite)["std"])[:, 0], ref.std(ddof=0).to_numpy(), "std")
    _close(np.asarray(call(finite)["max"])[:, 0], ref.max().to_numpy(), "max")
