"""The native window kernels over XLA's thread pool: the same bits for any number of threads.

A long series is cut into pieces fixed by the data and the window alone (sliding.cc's
``sliding_piece``: whole blocks, >= 2**16 rows), each piece rebuilding the block before it;
``JAXSUBSET_NATIVE_THREADS=1`` runs every piece on the calling thread. The two are compared
bit for bit on inputs long enough to be cut (several pieces, a ragged last one, windows and
non-finite points straddling the pieces' boundaries), as test_native_windows compares the
portable and AVX2 block loops.
"""

import jax
import numpy as np
import pytest

import jaxsubset
from jaxsubset import window_statistic
from references import X64


pytestmark = pytest.mark.skipif(
    not jaxsubset._native.available(), reason=f"native road: {jaxsubset._native.status()}"
)
RNG = np.random.default_rng(1919)
BLOCK_STATS = ("count", "sum", "mean", "var", "std", "sem", "min", "max")
OTHERS = ("first", "last", "skew", "kurt", "median", "quantile")
PIECE_ROWS = 1 << 16  # sliding.cc: kPieceRows
PIECE_BLOCKS = 32  # sliding.cc: kPieceBlocks


def _piece(w: int) -> int:
    """sliding.cc's sliding_piece: the window ends of one piece."""
    return max(PIECE_BLOCKS, -(-PIECE_ROWS // w)) * w


def _series(n: int, w: int, channels: int, dtype) -> np.ndarray:
    """Random data with non-finite points and zeros next to the pieces' boundaries."""
    y = RNG.normal(3.0, 2.0, (n, channels)).astype(dtype)
    p = _piece(w)
    for i, b in enumerate(range(p, n, p)):  # (the first boundary: every point finite)
        if i % 3 == 1:
            y[b - 1, 0] = np.nan  # the last point of a piece
            y[b + 1, -1] = np.inf  # just after the next starts
        elif i % 3 == 2:
            y[b - w // 2 - 1, 0] = -np.inf  # a window straddling the boundary holds it
    y[n // 3 : n // 3 + 2 * w, -1] = 0.0  # windows of zeros
    if p + 4 * w + 3 < n:
        y[p + 4 * w + 3, 0] = np.nan  # a group after the boundary falls back to single blocks
    return y


def _dtypes():
    return (np.float64, np.float32) if X64 else (np.float32,)


def _both(f, *args):
    """f(*args) with the default threads, then with JAXSUBSET_NATIVE_THREADS=1."""
    mp = pytest.MonkeyPatch()
    try:
        mp.delenv("JAXSUBSET_NATIVE_THREADS", raising=False)
        many = jax.tree.map(np.asarray, f(*args))
        mp.setenv("JAXSUBSET_NATIVE_THREADS", "1")
        one = jax.tree.map(np.asarray, f(*args))
    finally:
        mp.undo()
    return many, one


def _assert_same_bits(many, one):
    assert many.keys() == one.keys()
    for s in many:
        assert many[s].dtype == one[s].dtype, s
        np.testing.assert_array_equal(many[s], one[s], err_msg=s)


def _assert_pieces_are_the_uncut_loop(f, y, w, lead=0):
    """The rows around every piece boundary (and at the end) equal those of a slice shorter
    than a piece (run whole, from its row 0) that starts at a multiple of w: the same blocks,
    so the same bits, past the slice's first block."""
    n, p = len(y), _piece(w)
    whole = jax.tree.map(np.asarray, f(y))
    for s0 in [b - 4 * w for b in range(p, n, p)] + [(n - 6 * w) // w * w]:
        part = jax.tree.map(np.asarray, f(y[s0 : s0 + 8 * w]))
        lo, hi = w, min(8 * w, n - s0) - lead  # (rows of full windows inside the slice)
        for s in whole:
            np.testing.assert_array_equal(whole[s][s0 + lo : s0 + hi], part[s][lo:hi],
                                          err_msg=f"{s} near row {s0 + 4 * w}")  # fmt: skip


@pytest.mark.parametrize("dtype", _dtypes())
@pytest.mark.parametrize(("w", "pieces"), [(100, 3.4), (3, 2.5), (4096, 2.2)])
def test_block_statistics_same_bits_for_any_thread_count(w, pieces, dtype):
    n = int(pieces * _piece(w)) + 7  # a ragged last piece
    y = _series(n, w, 2, dtype)
    f = jax.jit(lambda v: window_statistic(v, w, BLOCK_STATS, method="native", ddof=1))
    many, one = _both(f, y)  # the same compiled function: the variable is read per call
    _assert_same_bits(many, one)
    _assert_pieces_are_the_uncut_loop(f, y, w)
    # and they are the windows: a few against the tree road
    ref = window_statistic(y[: 3 * _piece(w) // 2], w, ("mean", "max"), method="tree", ddof=1)
    eps = np.finfo(dtype).eps
    for s in ("mean", "max"):
        got = many[s][: 3 * _piece(w) // 2]
        np.testing.assert_allclose(got, np.asarray(ref[s]), rtol=64 * eps, atol=64 * eps)


@pytest.mark.parametrize("dtype", _dtypes())
def test_min_periods_center_propagate_and_others(dtype):
    w = 100
    n = 2 * _piece(w) + 313
    y = _series(n, w, 3, dtype)
    stats = (*BLOCK_STATS, *OTHERS)
    for kw in (dict(min_periods=60, center=True), dict(min_periods=0, nan_policy="propagate")):
        f = jax.jit(lambda v, kw=kw: window_statistic(v, w, stats, method="native", q=0.3, **kw))
        _assert_same_bits(*_both(f, y))


@pytest.mark.parametrize("dtype", _dtypes())
def test_vmap_and_padded_lengths(dtype):
    # a batch through vmap is one call: its series are cut (long) or grouped (short)
    w = 50
    n = _piece(w) + 999
    y = np.stack([_series(n, w, 1, dtype) for _ in range(3)])
    f = jax.jit(jax.vmap(lambda v: window_statistic(v, w, ("mean", "std", "median", "count"),
                                                    method="native", min_periods=3)))  # fmt: skip
    _assert_same_bits(*_both(f, y))
    short = np.stack([_series(5000, w, 2, dtype) for _ in range(40)])  # 40 short series
    _assert_same_bits(*_both(f, short))


def test_fresh_functions_per_setting_agree():
    # a fresh jitted function per setting gives the bits of the shared one
    w, dtype = 100, (np.float64 if X64 else np.float32)
    y = _series(int(2.5 * _piece(w)), w, 1, dtype)

    def fresh():
        return jax.jit(lambda v: window_statistic(v, w, ("mean", "std"), method="native"))

    many, one = _both(lambda v: fresh()(v), y)
    _assert_same_bits(many, one)


ORDER_CASES = [
    (64, dict(capacity=63)),
    (1000, dict(center=True)),
    (300, dict(nan_policy="propagate", min_periods=250)),
]


@pytest.mark.parametrize("dtype", _dtypes())
@pytest.mark.parametrize(("w", "kw"), ORDER_CASES)
def test_order_statistics_cut_into_row_pieces(w, kw, dtype):
    # sorted blocks cut at the rows whose windows start at a piece's first point
    n = int(2.6 * _piece(w))
    y = _series(n, w, 1, dtype)
    y[_piece(w) - 5 : _piece(w) + 5, 0] = 0.0
    y[_piece(w) + 2, 0] = -0.0  # ties of -0.0 and 0.0 across the boundary
    f = jax.jit(lambda v: window_statistic(v, w, ("median", "quantile", "mean"), q=0.9,
                                           method="native", **kw))  # fmt: skip
    many, one = _both(f, y)
    _assert_same_bits(many, one)
    _assert_pieces_are_the_uncut_loop(f, y, w, lead=(w - 1) // 2 if kw.get("center") else 0)
    m = 2 * w + _piece(w)  # (the reference over the first m rows: full windows up to m - w)
    ref = window_statistic(y[:m], w, "median", method="wavelet", **kw)
    np.testing.assert_array_equal(many["median"][: m - w], np.asarray(ref)[: m - w])


# --- x-width windows (jaxsubset_xwidth_stats): channels apart, the block loop's pieces -------


@pytest.mark.parametrize("dtype", _dtypes())
@pytest.mark.parametrize("even", [True, False])
def test_xwidth_windows_same_bits_for_any_thread_count(even, dtype):
    w = 100
    n = int(2.4 * _piece(w)) + 11
    x = np.arange(n, dtype=dtype) if even else np.cumsum(RNG.exponential(1.0, n)).astype(dtype)
    y = _series(n, w, 2, dtype)
    stats = ("mean", "std", "max", "count", "median", "skew")
    f = jax.jit(lambda v, x=x: jaxsubset.rolling_statistic(x, v, float(w), stats,
                                                           method="native", min_periods=5,
                                                           capacity=4 * w))  # fmt: skip
    _assert_same_bits(*_both(f, y))
    if even:  # (evenly spaced x: the fixed-count block loop, cut as window_statistic's)

        def g(v):
            return jaxsubset.rolling_statistic(np.arange(len(v), dtype=dtype), v, float(w),
                                               ("mean", "std"), method="native")  # fmt: skip

        _assert_pieces_are_the_uncut_loop(g, y, w)
