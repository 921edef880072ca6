"""Every bad static input raises a clear error naming the argument and the value."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsubset


X = np.arange(10.0)


def raises(exc, message):
    return pytest.raises(exc, match=re.escape(message))


@pytest.mark.parametrize(
    "call, exc, message",
    [
        (
            lambda: jaxsubset.isolate(X, X, 0, 3, capacity=0),
            ValueError,
            "isolate: `capacity` must be a positive int, got 0",
        ),
        (
            lambda: jaxsubset.isolate(X, X, 0, 3, capacity=2.5),
            TypeError,
            "isolate: `capacity` must be a Python int, got 2.5 of type float",
        ),
        (
            lambda: jaxsubset.select(X, X, 0, 3, capacity=True),
            TypeError,
            "select: `capacity` must be a Python int, got True",
        ),
        (
            lambda: jaxsubset.isolate(X.reshape(2, 5), X, 0, 3, capacity=2),
            ValueError,
            "isolate: `x` must be 1-D, got shape (2, 5)",
        ),
        (
            lambda: jaxsubset.select(X, X[:5], 0, 3, capacity=2),
            ValueError,
            "select: `x` and `y` must have the same length along the first axis, got len(x)=10 "
            "and y.shape=(5,)",
        ),
        (
            lambda: jaxsubset.isolate(X, X, 0.5, 3, capacity=2),
            TypeError,
            "isolate: `start` must hold integers, got dtype float64",
        ),
        (
            lambda: jaxsubset.chunks(X, X, 0),
            ValueError,
            "chunks: `n` must be a positive int, got 0",
        ),
        (
            lambda: jaxsubset.chunks(X, X, size=-2),
            ValueError,
            "chunks: `size` must be a positive int, got -2",
        ),
        (
            lambda: jaxsubset.chunks(X, X),
            TypeError,
            "chunks: pass exactly one of `n` (number of pieces) and `size`",
        ),
        (
            lambda: jaxsubset.chunks(X, X, 2, size=3),
            TypeError,
            "chunks: pass exactly one of `n` (number of pieces) and `size`",
        ),
        (
            lambda: jaxsubset.sliding(X, X, 0),
            ValueError,
            "sliding: `size` must be a positive int, got 0",
        ),
        (
            lambda: jaxsubset.sliding(X, X, 3, step=0),
            ValueError,
            "sliding: `step` must be a positive int, got 0",
        ),
        (
            lambda: jaxsubset.sliding(X, X, 11),
            ValueError,
            "sliding: `size` must be <= len(x)=10, got 11",
        ),
        (
            lambda: jaxsubset.select(X, X, 0, 3, capacity=2, closed="open"),
            ValueError,
            "select: `closed` must be one of 'left', 'right', 'both', 'neither', got 'open'",
        ),
        (
            lambda: jaxsubset.rolling(X, X, 1.0, capacity=2, closed=None),
            ValueError,
            "rolling: `closed` must be one of",
        ),
        (
            lambda: jaxsubset.rolling(X, X, -1.0, capacity=2),
            ValueError,
            "rolling: `width` must be >= 0",
        ),
        (
            lambda: jaxsubset.bins(X, X, np.array([0.0, 5.0, 3.0]), capacity=2),
            ValueError,
            "bins: `edges` must increase monotonically, but edges[1]=5.0 > edges[2]=3.0",
        ),
        (
            lambda: jaxsubset.bins(X, X, np.array([1.0]), capacity=2),
            ValueError,
            "bins: `edges` must be a 1-D array of at least 2 edges, got shape (1,)",
        ),
        (
            lambda: jaxsubset.bins(X, X, np.array([0.0, np.nan]), capacity=2),
            ValueError,
            "bins: `edges` holds NaN",
        ),
        (
            lambda: jaxsubset.select(X[::-1], X, 0, 3, capacity=2),
            ValueError,
            "select: `x` must be sorted ascending, but x[0]=9.0 > x[1]=8.0",
        ),
        (
            lambda: jaxsubset.rolling(np.array([0.0, np.nan, 2.0]), X[:3], 1.0, capacity=2),
            ValueError,
            "rolling: `x` holds NaN at index 1 (1 NaN in total)",
        ),
        (
            lambda: jaxsubset.bins(np.array([0.0, 2.0, 1.0]), X[:3], X[:3], capacity=2),
            ValueError,
            "bins: `x` must be sorted ascending, but x[1]=2.0 > x[2]=1.0",
        ),
        (
            lambda: jaxsubset.nearest(np.array([1.0, 0.0]), 0.5),
            ValueError,
            "nearest: `x` must be sorted ascending",
        ),
        (
            lambda: jaxsubset.nearest(np.zeros(0), 0.5),
            ValueError,
            "nearest: `x` must hold at least one point, got len(x)=0",
        ),
        (
            lambda: jaxsubset.select(X, X, np.nan, 3.0, capacity=2),
            ValueError,
            "select: `lo` holds NaN; a bound must be a number",
        ),
        (
            lambda: jaxsubset.select(X, X, "a", 3.0, capacity=2),
            TypeError,
            "select: `lo` is a date/duration ('a') but `x` is not a time axis",
        ),
        (
            lambda: jaxsubset.select(np.array(["a", "b"]), X[:2], 0, 1, capacity=2),
            TypeError,
            "select: `x` must be numeric, got dtype <U1",
        ),
        (
            lambda: jaxsubset.isolate(X, X, 0, 3, capacity=2, length=11),
            ValueError,
            "isolate: `length` must be in [0, len(x)=10], got 11",
        ),
        (
            lambda: jaxsubset.chunks(X, X, 2).apply(lambda *a: 0, batch_size=0),
            ValueError,
            "Subsets.apply: `batch_size` must be a positive int, got 0",
        ),
        (
            lambda: jaxsubset.chunks(X, X, 2).scatter(np.zeros(3), size=10),
            ValueError,
            "Subsets.scatter: `values` must have shape (*batch, L, ...) = (2, 5) + (...), got (3,)",
        ),
        (
            lambda: jaxsubset.chunks(X, X, 2).scatter(np.zeros((2, 5)), size=10, reduce="max"),
            ValueError,
            "Subsets.scatter: `reduce` must be 'mean' or 'sum', got 'max'",
        ),
        (
            lambda: jaxsubset.chunks(X, X, 2).var(ddof=-1),
            ValueError,
            "Subsets.var: `ddof` must be a >= 0 int, got -1",
        ),
        (
            lambda: jaxsubset.gather(X, X, jaxsubset.ranges.select(X, 1.0, 3.0)),
            TypeError,
            "gather: `capacity` is required for ranges whose size depends on data",
        ),
        (lambda: jaxsubset.pack([]), ValueError, "pack: `datasets` must hold at least one"),
        (
            lambda: jaxsubset.pack([(X, X), (X[:3], np.zeros((3, 2)))]),
            ValueError,
            "pack: every `y` must have the same channel shape",
        ),
        (
            lambda: jaxsubset.required_capacity(jaxsubset.select, X, X, 0, 1, capacity=3),
            TypeError,
            "required_capacity: do not pass `capacity`",
        ),
    ],
)
def test_bad_input_messages(call, exc, message):
    with raises(exc, message):
        call()


def test_traced_capacity_is_rejected_with_advice():
    f = jax.jit(lambda c: jaxsubset.isolate(X, X, 0, 3, capacity=c))
    with raises(TypeError, "isolate: `capacity` must be a static Python int, got a traced value"):
        f(4)


def test_traced_chunk_count_is_rejected():
    f = jax.jit(lambda n: jaxsubset.chunks(X, X, n))
    with raises(TypeError, "chunks: `n` must be a static Python int, got a traced value"):
        f(2)


def test_traced_unsorted_x_is_documented_and_check_sorted_raises_at_run_time():
    bad = jnp.array([0.0, 3.0, 1.0, 4.0])

    @jax.jit
    def f(x):
        x = jaxsubset.check_sorted(x)
        return jaxsubset.select(x, x, 0.5, 3.5, capacity=4).count

    assert int(f(jnp.sort(bad))) == 2
    with pytest.raises(
        Exception,
        match=re.escape(
            "`x` must be sorted ascending, but 1 descending step(s) found, the first at index 1"
        ),
    ):
        jax.block_until_ready(f(bad))
    with pytest.raises(Exception, match=re.escape("`x` holds NaN, the first at index 2")):
        jax.block_until_ready(f(jnp.array([0.0, 1.0, jnp.nan, 4.0])))


def test_check_overflow_eager_and_under_jit_and_vmap():
    x = jnp.arange(100.0)
    ok = jaxsubset.isolate(x, x, 0, 4, capacity=4)
    assert jaxsubset.check_overflow(ok) is ok
    with raises(
        ValueError,
        "2 subset(s) overflow the capacity 4; the largest holds 30 points. "
        "Pass capacity=32 or more",
    ):
        jaxsubset.check_overflow(
            jaxsubset.isolate(x, x, np.array([0, 10, 50]), np.array([4, 40, 60]), capacity=4)
        )

    @jax.jit
    def f(i1):
        return jaxsubset.check_overflow(jaxsubset.isolate(x, x, 0, i1, capacity=8)).sum()

    assert float(f(8)) == 28.0
    with pytest.raises(
        Exception,
        match=re.escape("1 subset(s) overflow the capacity 8; the largest holds 9 points"),
    ):
        jax.block_until_ready(f(9))
    with pytest.raises(Exception, match="overflow the capacity 8; the largest holds 20 points"):
        jax.block_until_ready(jax.vmap(f)(jnp.array([3, 20])))
    with raises(TypeError, "check_overflow: expected Subsets, got ndarray"):
        jaxsubset.check_overflow(np.zeros(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_host_checks_read_in_blocks_find_a_fault_at_every_block_edge(dtype):
    """Eager calls check sorted, NaN-free (and, where x is computed with, subnormal-free) x on
    the host in blocks (temporaries in cache); a fault on either side of a block edge, at
    the ends, or one NaN alone is found with the whole-array message (first index, total)."""
    from jaxsubset._core._validate import HOST_BLOCK

    n = 2 * HOST_BLOCK + 5
    base = np.arange(n).astype(dtype)
    jaxsubset.rolling_statistic(base, base, 3, "sum")  # fault-free: no error
    for i in (0, HOST_BLOCK - 2, HOST_BLOCK - 1, HOST_BLOCK, HOST_BLOCK + 1, n - 2):
        x = base.copy()
        x[i], x[i + 1] = x[i + 1], x[i]  # one descending step, at i
        with raises(ValueError, f"`x` must be sorted ascending, but x[{i}]="):
            jaxsubset.rolling_statistic(x, base, 3, "sum")
        if dtype == np.int32:
            continue
        for j in (i, i + 1):
            x = base.copy()
            x[j] = np.nan
            with raises(ValueError, f"`x` holds NaN at index {j} (1 NaN in total)"):
                jaxsubset.select(x, base, 0.0, 3.0, capacity=4)
        if dtype == np.float64:  # (float32 x in 32-bit mode: the program's own positions)
            x = base.copy() + 1.0
            x[: i + 2] = np.linspace(1e-310, 2e-310, i + 2)  # subnormals up to i + 1
            x[i + 2 :] = 1.0 + np.arange(n - i - 2)
            x[: i + 1] = 0.0  # zeros are no subnormals: the first one is at i + 1
            with raises(
                ValueError, f"subnormal number {x[i + 1].item()!r} (at flat index {i + 1})"
            ):
                jaxsubset.rolling_statistic(x, base, 1.0, "sum")
    if dtype != np.int32:  # one point: no comparison, the NaN found all the same
        with raises(ValueError, "`x` holds NaN at index 0 (1 NaN in total)"):
            jaxsubset.select(np.array([np.nan], dtype), np.ones(1), 0.0, 1.0, capacity=1)
