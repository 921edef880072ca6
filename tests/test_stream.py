"""stream: larger-than-memory data block by block equals the in-memory path, exactly."""

import gc
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset
from compilations import compilations
from jaxsubset._streaming import buffers, driver, sources
from references import FLOAT, X64, needs_x64


STATS = ("sum", "mean", "var", "std", "min", "max", "median", "argmin", "argmax")
N = 1003
BLOCK = 64
# same points, same padding; XLA may vectorise a sum differently: ~1 ulp per term
SUM_TOL = dict(rtol=1e-13, atol=1e-13) if X64 else dict(rtol=1e-5, atol=1e-5)


def R(rtol):
    """``rtol`` in 64-bit mode; float32's few ulps per term of a sum in 32-bit mode."""
    return dict(rtol=rtol) if X64 else dict(rtol=2e-5, atol=2e-5)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    x = np.sort(np.round(rng.uniform(0.0, 100.0, N), 1))  # ties on purpose
    y = rng.normal(3.0, 2.0, N)
    return x.astype(FLOAT), y.astype(FLOAT)  # the dtype JAX holds: NumPy references agree


def _subsets(x, y, kind, capacity, kw):
    """The in-memory path: the constructor of the same name, on the whole arrays."""
    if kind == "chunks":
        return jaxsubset.chunks(x, y, kw.get("n"), size=kw.get("size"))
    if kind == "sliding":
        return jaxsubset.sliding(x, y, kw["size"], step=kw.get("step", 1))
    if kind == "rolling":
        return jaxsubset.rolling(
            x, y, kw["width"], capacity=capacity, at=kw.get("at"), closed=kw.get("closed", "right")
        )
    if kind == "bins":
        return jaxsubset.bins(x, y, kw["edges"], capacity=capacity)
    return jaxsubset.select(
        x, y, kw["lo"], kw["hi"], capacity=capacity, closed=kw.get("closed", "left")
    )


def _reference(x, y, kind, capacity, kw, stats=STATS):
    """In-memory results, compiled once (eager reductions would compile op by op: slow)."""

    def f(x, y):
        s = _subsets(x, y, kind, capacity, kw)
        out = {name: getattr(s, name)() for name in stats}
        out.update(start=s.start, count=s.count, overflow=s.overflow)
        return out

    return jax.jit(f)(jnp.asarray(x), jnp.asarray(y))


def _assert_same(out, ref, stats=STATS):
    for name in ("start", "count", "overflow"):
        np.testing.assert_array_equal(out[name], ref[name], err_msg=name)
    for name in stats:
        if name in ("sum", "mean", "var", "std"):
            # same points, same padding; XLA may vectorise the sum differently: ~1 ulp
            np.testing.assert_allclose(out[name], ref[name], **SUM_TOL, err_msg=name)
        else:  # selections are exact
            np.testing.assert_array_equal(out[name], ref[name], err_msg=name)


def _cases(x):
    rng = np.random.default_rng(1)
    at = rng.uniform(-5.0, 105.0, 37)  # unsorted anchors, some outside the data
    lo = rng.uniform(-10.0, 100.0, (3, 5))
    edges = np.array([-5.0, 0.0, 0.0, 3.3, 10.0, 10.05, 50.0, 99.9, 100.0, 120.0])
    return [
        ("chunks", None, {"size": 50}),
        ("chunks", None, {"n": 7}),
        ("sliding", None, {"size": 100, "step": 7}),  # windows longer than a block
        ("rolling", 32, {"width": 2.0}),
        ("rolling", 4, {"width": 2.0, "closed": "both"}),  # overflowing windows
        ("rolling", 128, {"width": np.full(37, 7.5), "at": at, "closed": "left"}),
        ("bins", 128, {"edges": edges}),
        ("select", 256, {"lo": lo, "hi": lo + rng.uniform(0.0, 20.0, (3, 5)), "closed": "both"}),
    ]


def test_stream_every_kind_equals_in_memory(data, tmp_path):
    x, y = data
    path = tmp_path / "xy.npy"
    np.save(path, np.stack([x, y], axis=1))
    for kind, cap, kw in _cases(x):
        out = jaxsubset.stream(
            str(path), kind, statistic=STATS, capacity=cap, block_size=BLOCK, **kw
        )
        ref = _reference(x, y, kind, cap, kw)
        assert out["count"].shape == ref["count"].shape, kind
        _assert_same(out, ref)
        if cap == 4:  # the overflow case really overflows
            assert ref["overflow"].any()


def test_stream_sources_agree(data, tmp_path):
    x, y = data
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"t": x, "v": y}), tmp_path / "d.parquet", row_group_size=97)
    cuts = [0, 5, 6, 200, 201, 700, N]
    blocks = [(x[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    kw = dict(kind="rolling", width=3.0, capacity=64, statistic=("mean", "max", "argmin"))
    ref = _reference(x, y, "rolling", 64, {"width": 3.0}, ("mean", "max", "argmin"))
    sources = [
        (str(tmp_path / "x.npy"), str(tmp_path / "y.npy")),
        str(tmp_path / "d.parquet"),
        blocks,
        lambda: iter(blocks),
        (np.load(tmp_path / "x.npy", mmap_mode="r"), y),
    ]
    for src in sources:
        cols = ("t", "v")
        out = jaxsubset.stream(src, block_size=50, columns=cols, **kw)
        _assert_same(out, ref, ("mean", "max", "argmin"))


def test_stream_fn_channels_and_one_shot_iterator(data):
    x, y = data
    y2 = np.stack([y, -2 * y], axis=1)

    def fn(xs, ys, m):
        return {"w": jnp.sum(jnp.where(m[:, None], ys * xs[:, None], 0), axis=0), "n": m.sum()}

    gen = ((x[a : a + 30], y2[a : a + 30]) for a in range(0, N, 30))  # one-shot iterator
    out = jaxsubset.stream(gen, "chunks", size=40, fn=fn, statistic="median", block_size=BLOCK)
    ref = jaxsubset.chunks(jnp.asarray(x), jnp.asarray(y2), size=40)
    want = ref.apply(fn)
    np.testing.assert_allclose(out["result"]["w"], want["w"], **R(1e-13))
    np.testing.assert_array_equal(out["result"]["n"], want["n"])
    np.testing.assert_array_equal(out["median"], ref.median())
    # NumPy reference for one chunk
    np.testing.assert_allclose(out["result"]["w"][3], (y2[120:160] * x[120:160, None]).sum(0))
    # statistics only (x is not read in the data pass), from a one-shot iterator
    gen = ((x[a : a + 30], y2[a : a + 30]) for a in range(0, N, 30))
    out = jaxsubset.stream(gen, "sliding", size=90, step=45, statistic="max", block_size=BLOCK)
    want = np.lib.stride_tricks.sliding_window_view(y2, 90, axis=0)[::45].max(axis=-1)
    np.testing.assert_array_equal(out["max"], want)
    # the x-value kinds need a second read: a one-shot iterator is refused clearly
    gen = ((x[a : a + 30], y[a : a + 30]) for a in range(0, N, 30))
    with pytest.raises(TypeError, match="one-shot iterator"):
        jaxsubset.stream(gen, "rolling", width=1.0, capacity=8, statistic="mean")


def test_stream_one_compiled_kernel_for_all_blocks(data):
    x, y = data
    kw = dict(kind="sliding", size=37, step=3, statistic="sum", block_size=32)
    with compilations() as first:
        out = jaxsubset.stream((x, y), **kw)
    assert first.of("block_kernel") == 1, first  # 32 blocks (padded last one), one compilation
    with compilations() as again:
        out2 = jaxsubset.stream((x, y * 2), **kw)  # new data, same shapes: JAX's cache serves
    assert again.of("block_kernel") == 0, again
    want = np.lib.stride_tricks.sliding_window_view(y, 37)[::3].sum(axis=1)
    np.testing.assert_allclose(out["sum"], want, **R(1e-12))
    np.testing.assert_allclose(out2["sum"], 2 * want, **R(1e-12))
    with compilations() as chunks:  # blocks holding whole chunks: the reshape kernel, once
        for _ in range(2):
            out = jaxsubset.stream((x, y), "chunks", size=8, statistic="max", block_size=64)
    assert chunks.of("chunk_kernel") == 1 and chunks.of("block_kernel") == 0, chunks
    np.testing.assert_array_equal(out["max"], [y[a : a + 8].max() for a in range(0, N, 8)])


@pytest.mark.parametrize("run", ["stream", "shard"])
def test_kernels_live_in_jax_cache_and_clear_caches_frees_them(data, run):
    # the compiled kernels (and the user's fn they hold) live only in JAX's cache
    x, y = data

    def fn(xs, ys, m):
        return jnp.sum(jnp.where(m, ys, 0.0))

    call = jaxsubset.stream if run == "stream" else jaxsubset.shard
    kw = dict(kind="rolling", width=2.0, capacity=32, fn=fn, statistic="mean")
    if run == "stream":
        kw["block_size"] = BLOCK
    with compilations() as seen:
        first = call((x, y), **kw) if run == "stream" else call(x, y, **kw)
        again = call((x, y), **kw) if run == "stream" else call(x, y, **kw)
    assert len([n for n in seen if "kernel" in n]) == 1, seen  # the second call compiled nothing
    ref = jaxsubset.rolling(jnp.asarray(x), jnp.asarray(y), 2.0, capacity=32)
    np.testing.assert_allclose(first["result"], ref.sum(), **R(1e-13))
    np.testing.assert_array_equal(again["result"], first["result"])
    alive = weakref.ref(fn)
    del fn, kw
    gc.collect()
    assert alive() is not None  # held by JAX's cache (the static argument of the kernel)...
    jax.clear_caches()
    gc.collect()
    assert alive() is None  # ... and by nothing of ours once JAX's caches are cleared


def test_stream_matches_in_memory_under_jit(data):
    x, y = data
    edges = jnp.linspace(0.0, 100.0, 11)
    f = jax.jit(lambda x, y, e: jaxsubset.bins(x, y, e, capacity=256).std())
    out = jaxsubset.stream((x, y), "bins", edges=np.asarray(edges), capacity=256, statistic="std")
    np.testing.assert_allclose(out["std"], f(jnp.asarray(x), jnp.asarray(y), edges), **R(1e-13))
    np.testing.assert_allclose(out["std"][0], np.std(y[(x >= 0.0) & (x < 10.0)]), **R(1e-12))


def test_stream_grows_its_capacity(data):
    x, y = data
    out, cap = jaxsubset.grow_capacity(
        jaxsubset.stream, (x, y), "rolling", width=4.0, statistic="mean", block_size=BLOCK
    )
    ref = jaxsubset.rolling(jnp.asarray(x), jnp.asarray(y), 4.0, capacity=cap)
    assert not out["overflow"].any() and cap == jaxsubset.required_capacity(ref.count)
    np.testing.assert_allclose(out["mean"], ref.mean(), **R(1e-13))
    # capacity="auto": the same capacity from the x pass alone (the same kernel, no rerun)
    auto = jaxsubset.stream(
        (x, y), "rolling", width=4.0, statistic="mean", block_size=BLOCK, capacity="auto"
    )
    assert not auto["overflow"].any()
    np.testing.assert_array_equal(auto["mean"], out["mean"])


def test_auto_capacity_is_what_the_in_memory_ranges_need(data):
    # every x-value kind: the plan's capacity is required_capacity of the in-memory ranges
    from jaxsubset._streaming.plan import plan

    x, y = data
    src = sources.open_source((x, y), columns=("x", "y"), read_size=BLOCK, func="test")
    r = jaxsubset.ranges
    edges = np.array([-5.0, 0.0, 3.3, 10.0, 50.0, 99.9, 120.0])
    lo = np.array([0.0, 10.0, 40.0])
    cases = [
        ("rolling", {"width": 2.0}, r.rolling(x, 2.0)),
        ("rolling", {"width": 2.0, "closed": "both"}, r.rolling(x, 2.0, closed="both")),
        ("rolling", {"width": 3.0, "center": True}, r.rolling(x, 3.0, center=True)),
        ("rolling", {"before": 1.0, "after": 2.5}, r.rolling(x, before=1.0, after=2.5)),
        ("bins", {"edges": edges}, r.bins(x, edges)),
        ("select", {"lo": lo, "hi": lo + 7.0}, r.select(x, lo, lo + 7.0)),
        ("dynamic", {"every": 5.0, "period": 8.0}, r.dynamic(x, 5.0, period=8.0)),
    ]
    for kind, kw, want in cases:
        pl = plan(src, kind, kw, "auto", BLOCK)
        assert pl.capacity == jaxsubset.required_capacity(want.count), (kind, kw)


def test_stream_progress_and_errors(data, capsys):
    x, y = data
    jaxsubset.stream((x, y), "chunks", size=100, statistic="mean", block_size=200, progress=True)
    assert "block 6/6" in capsys.readouterr().err
    xs = x.copy()
    xs[500] = 1e9
    with pytest.raises(ValueError, match=r"sorted ascending, but x\[500\]"):
        jaxsubset.stream((xs, y), "rolling", width=1.0, capacity=8, statistic="mean")
    with pytest.raises(ValueError, match="unknown statistic 'avg'"):
        jaxsubset.stream((x, y), "chunks", size=10, statistic="avg")
    with pytest.raises(TypeError, match="`capacity` is required for bins"):
        jaxsubset.stream((x, y), "bins", edges=[0.0, 1.0], statistic="mean")
    with pytest.raises(ValueError, match="`kind` must be one of"):
        jaxsubset.stream((x, y), "windows", size=3, statistic="mean")
    with pytest.raises(TypeError, match="unexpected argument"):
        jaxsubset.stream((x, y), "sliding", size=3, width=2, statistic="mean")
    with pytest.raises(ValueError, match="`block_size` must be a positive int, got 0"):
        jaxsubset.stream((x, y), "chunks", size=3, statistic="mean", block_size=0)
    with pytest.raises(ValueError, match=r"`size` must be <= len\(x\)=1003"):
        jaxsubset.stream((x, y), "sliding", size=2000, statistic="mean")
    with pytest.raises(TypeError, match="pass `statistic`"):
        jaxsubset.stream((x, y), "chunks", size=3)


def _in_memory(kind, x, kw):
    """The constructor of the same name on the same bounds (capacity 8)."""
    if kind == "bins":
        return jaxsubset.bins(x, x, kw["edges"], capacity=8)
    if kind == "select":
        return jaxsubset.select(x, x, kw["lo"], kw["hi"], capacity=8)
    return jaxsubset.rolling(x, x, kw["width"], at=kw.get("at"), capacity=8)


@pytest.mark.parametrize(
    "kind, bad",
    [
        ("bins", {"edges": [0.0, 5.0, 3.0]}),  # decreasing
        ("bins", {"edges": [[0.0, 1.0]]}),  # not 1-D
        ("bins", {"edges": [0.0, np.nan]}),
        ("select", {"lo": np.nan, "hi": 1.0}),
        ("select", {"lo": "a", "hi": 1.0}),  # not a number, and x is no time axis
        ("select", {"lo": [1 + 2j], "hi": 1.0}),
        ("rolling", {"width": -1.0}),
        ("rolling", {"width": 1.0, "at": [np.nan]}),
    ],
)
def test_stream_refuses_bad_bounds_as_the_constructors_do(kind, bad):
    # the bounds go through the in-memory resolver's own checks: the same error, the same text
    x = np.arange(10.0)
    with pytest.raises((TypeError, ValueError)) as want:
        _in_memory(kind, jnp.asarray(x), bad)
    for run in (jaxsubset.stream, jaxsubset.shard):
        args = ((x, x),) if run is jaxsubset.stream else (x, x)
        with pytest.raises(type(want.value)) as got:
            run(*args, kind, capacity=8, statistic="mean", **bad)
        prefix = f"{run.__name__}({kind!r}): "
        assert str(got.value).startswith(prefix), str(got.value)
        assert str(got.value)[len(prefix) :] == str(want.value).split(": ", 1)[1]


def test_stream_blocks_exactly_filled_ddof_and_count():
    # N a multiple of the block (the last block is full: the end is found by peeking)
    rng = np.random.default_rng(2)
    x = np.arange(340.0)
    y = rng.normal(size=340)
    blocks = [(x[a : a + 68], y[a : a + 68]) for a in range(0, 340, 68)] + [(x[:0], y[:0])]
    out = jaxsubset.stream(blocks, "chunks", size=17, statistic=("count", "std"), ddof=1)
    assert out["count"].tolist() == [17] * 20
    np.testing.assert_allclose(out["std"], y.reshape(20, 17).std(axis=1, ddof=1), **R(1e-12))
    out = jaxsubset.stream(blocks, "sliding", size=100, step=60, statistic="var", block_size=68)
    want = np.lib.stride_tricks.sliding_window_view(y, 100)[::60].var(axis=1)
    np.testing.assert_allclose(out["var"], want, **R(1e-12))
    sh = jaxsubset.shard(x, y, "chunks", size=17, statistic="var", ddof=1)
    np.testing.assert_allclose(sh["var"], y.reshape(20, 17).var(axis=1, ddof=1), **R(1e-12))


def test_stream_memory_maps_read_only_and_copy_on_write(tmp_path):
    # pages already read are released (read-only maps), but edits of a copy-on-write map stay
    y = np.arange(40000.0)  # 80 pages; blocks of 1000 points are 2 pages
    np.save(tmp_path / "y.npy", y)
    ro = np.load(tmp_path / "y.npy", mmap_mode="r")
    cow = np.load(tmp_path / "y.npy", mmap_mode="c")
    cow[2000:3000] = -1.0  # whole pages that a release would drop (and so lose the edit)
    want = y.reshape(40, 1000).mean(axis=1)
    for arr, third in ((ro, want[2]), (cow, -1.0)):
        for _ in range(2):  # the second read comes after the first one released its pages
            out = jaxsubset.stream((y, arr), "chunks", size=1000, statistic="mean", block_size=1000)
            assert out["mean"][2] == FLOAT(third)
            np.testing.assert_allclose(np.delete(out["mean"], 2), np.delete(want, 2), **R(1e-7))


@pytest.mark.parametrize(
    "kind, kw", [("sliding", {"size": 50, "step": 7}), ("chunks", {"size": 40})]
)
def test_stream_nan_policy_omit_equals_numpy_nan_functions(data, kind, kw):
    x, y = data
    y = y.copy()
    y[::9] = np.nan
    y[200:260] = np.nan  # whole windows of missing readings
    out = jaxsubset.stream(
        (x, y), kind, statistic=("mean", "max", "valid"), nan_policy="omit", block_size=BLOCK, **kw
    )
    ranges = (
        jaxsubset.ranges.sliding(x, 50, step=7)
        if kind == "sliding"
        else (jaxsubset.ranges.chunks(x, size=40))
    )
    for k, (i0, c) in enumerate(
        zip(np.asarray(ranges.start), np.asarray(ranges.count), strict=True)
    ):
        seg = y[i0 : i0 + c]
        assert out["valid"][k] == np.sum(~np.isnan(seg))
        if np.isnan(seg).all():
            assert np.isnan(out["mean"][k]) and np.isnan(out["max"][k])
        else:
            np.testing.assert_allclose(out["mean"][k], np.nanmean(seg), **R(1e-12))
            assert out["max"][k] == np.nanmax(seg)
    prop = jaxsubset.stream((x, y), kind, statistic="mean", block_size=BLOCK, **kw)
    assert np.isnan(prop["mean"]).sum() > np.isnan(out["mean"]).sum()
    with pytest.raises(ValueError, match="`nan_policy` must be one of"):
        jaxsubset.stream((x, y), kind, statistic="mean", nan_policy="drop", **kw)


@pytest.mark.parametrize("block, halo", [(64, 0), (64, 100), (1003, 0), (2000, 5), (7, 3)])
def test_array_windows_are_the_data_zero_padded(block, halo):
    # the random-access road (straight from the arrays into pooled, aligned buffers) gives the
    # same windows as slicing the data by hand, and as the generic road over pieces
    rng = np.random.default_rng(3)
    x = np.arange(1003, dtype=np.float32)  # keeps its dtype (JAX's: float32)
    y = rng.normal(size=(1003, 2)).astype(FLOAT)  # y in JAX's dtype: kept as it is
    xy = np.stack([x.astype(FLOAT), y[:, 0]], axis=1)  # y as an interleaved column
    width = block + halo
    for yy in (y, xy[:, 1]):
        src = sources.ArraySource(x, yy, block, "test", "arrays")
        pool = buffers.Buffers()
        got = []
        for g0, bx, by, n, last in src.windows(block, halo, True, pool):
            assert bx.ctypes.data % 64 == 0 and by.ctypes.data % 64 == 0
            assert bx.dtype == np.float32 and by.shape == (width,) + yy.shape[1:]
            got.append((g0, bx.copy(), by.copy(), n, last))
            pool.give(bx, by)  # reused by the next window: what was yielded must not change
        pieces = ((x[a : a + 50], yy[a : a + 50]) for a in range(0, 1003, 50))
        generic = list(buffers.piece_windows(pieces, block, halo, True))
        assert len(got) == len(generic) == -(-1003 // block)
        for (g0, bx, by, n, last), (g0b, bxb, byb, nb, lastb) in zip(got, generic, strict=True):
            want_x = np.zeros(width, np.float32)
            want_x[:n] = x[g0 : g0 + n]
            want_y = np.zeros((width,) + yy.shape[1:], FLOAT)  # y in JAX's dtype
            want_y[:n] = yy[g0 : g0 + n]
            assert n == min(width, 1003 - g0) and last == (g0 + block >= 1003)
            assert (g0, n, last) == (g0b, nb, lastb)
            np.testing.assert_array_equal(bx, want_x)
            np.testing.assert_array_equal(by, want_y)
            np.testing.assert_array_equal(bxb, want_x)
            np.testing.assert_array_equal(byb, want_y)


@needs_x64  # 1e8 + noise: float32 holds no digits of the noise
def test_stream_reuses_block_buffers_without_corrupting_results(tmp_path):
    # many small blocks through a deep read-ahead: the reader refills buffers the kernel has
    # finished with; every chunk's statistics still equal NumPy's on its own points
    rng = np.random.default_rng(4)
    n = 40_000
    xy = np.stack([np.arange(n, dtype=np.float64), 1e8 + rng.normal(size=n)], axis=1)
    np.save(tmp_path / "xy.npy", xy)
    for prefetch in (1, 5):
        out = jaxsubset.stream(
            str(tmp_path / "xy.npy"),
            "chunks",
            size=100,
            statistic=("mean", "std", "min", "max"),
            block_size=300,
            prefetch=prefetch,
        )
        y = xy[:, 1].reshape(-1, 100)
        np.testing.assert_allclose(out["mean"], y.mean(axis=1), **R(1e-15))
        np.testing.assert_allclose(out["std"], y.std(axis=1), **R(1e-9))
        np.testing.assert_array_equal(out["min"], y.min(axis=1))
        np.testing.assert_array_equal(out["max"], y.max(axis=1))


@pytest.mark.parametrize("nan_policy", ["propagate", "omit"])
def test_stream_sliding_windows_from_pieces_equal_in_memory(data, monkeypatch, nan_policy):
    # size a multiple of step: windows are combined from chunks of `step` points (each point
    # read once); the results equal the in-memory windows and NumPy's, NaN handling included
    x, y = data
    y = y.copy()
    y[::37] = np.nan
    y[300:420] = np.nan  # windows without any reading
    y2 = np.stack([y, 1e8 + 3.0 * y], axis=1)  # channels; a large offset
    combined = []
    real = driver.combine_pieces
    monkeypatch.setattr(driver, "combine_pieces", lambda *a: combined.append(1) or real(*a))
    stats = ("count", "sum", "mean", "min", "max", "valid")
    for size, step in ((100, 50), (60, 20), (64, 64), (1003, 1003), (96, 3)):
        before = len(combined)
        out = jaxsubset.stream(
            (x, y2), "sliding", size=size, step=step, statistic=stats, nan_policy=nan_policy,
            block_size=BLOCK,
        )  # fmt: skip
        assert len(combined) == before + 1, (size, step)  # the pieces road was taken
        s = jaxsubset.sliding(jnp.asarray(x), jnp.asarray(y2), size, step=step)
        np.testing.assert_array_equal(out["start"], s.start)
        np.testing.assert_array_equal(out["count"], s.count)
        np.testing.assert_array_equal(out["overflow"], s.overflow)
        np.testing.assert_array_equal(out["valid"], s.valid_count())
        for name in ("sum", "mean"):
            want = getattr(s, name)(nan_policy=nan_policy)
            np.testing.assert_allclose(out[name], want, **R(1e-13), err_msg=name)
            assert out[name].dtype == want.dtype
        # min/max: against NumPy only (XLA's CPU min/max over the middle axis of a (K, L, C)
        # slab can drop a NaN there, so the in-memory windows are no reference for NaN)
        win = np.lib.stride_tricks.sliding_window_view(y2, size, axis=0)[::step]
        numpy = {"sum": np.sum, "mean": np.mean, "min": np.min, "max": np.max}
        if nan_policy == "omit":
            numpy = {"sum": np.nansum, "mean": np.nanmean, "min": np.nanmin, "max": np.nanmax}
        with warnings.catch_warnings():  # NumPy warns on windows without readings
            warnings.simplefilter("ignore", RuntimeWarning)
            for name, f in numpy.items():
                np.testing.assert_allclose(out[name], f(win, axis=-1), **R(1e-12), err_msg=name)
                if name in ("min", "max"):  # exact, NaN where NumPy has one
                    np.testing.assert_array_equal(out[name], f(win, axis=-1), err_msg=name)
    # windows of 1000 pieces are left to the gather road, with the same results
    before = len(combined)
    y = data[1]
    out = jaxsubset.stream((x, y), "sliding", size=1000, step=1, statistic="max", block_size=BLOCK)
    assert len(combined) == before
    want = np.lib.stride_tricks.sliding_window_view(y, 1000).max(axis=-1)
    np.testing.assert_array_equal(out["max"], want)
    # integer y: the mean in JAX's float dtype, as in memory
    yi = np.arange(1003) % 17
    out = jaxsubset.stream((x, yi), "sliding", size=40, step=20, statistic=("mean", "sum"))
    s = jaxsubset.sliding(jnp.asarray(x), jnp.asarray(yi), 40, step=20)
    for name in ("mean", "sum"):
        assert out[name].dtype == getattr(s, name)().dtype
        np.testing.assert_allclose(out[name], getattr(s, name)(), **R(1e-15))
    with pytest.raises(ValueError, match=r"`size` must be <= len\(x\)=1003"):
        jaxsubset.stream((x, y), "sliding", size=2000, step=1000, statistic="mean")
