"""Index constructors: explicit ranges, Python slices, chunks and fixed-size sliding windows.

Their ranges follow from static sizes and integer bounds alone (no search in x); integer bounds
are clipped on the host before they meet the index dtype, so nothing wraps in 32-bit mode.
"""

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    ArrayLike,
    as_int_bounds,
    as_x,
    as_xy,
    bucketing as _bucket,
    index_dtype,
    now_or_traced,
    static_int,
)
from .._subsets import Subsets, gather_padded, read_rows
from ._buckets import eager, keep_host
from ._eager import bucketed
from ._type import Ranges, pieces_of, real_length, to_subsets, with_pieces


def gather(x: ArrayLike, y: ArrayLike, ranges: Ranges, *, capacity: int | None = None) -> Subsets:
    """Read index ranges into padded :class:`Subsets` (one gather, never a shifted window).

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        ranges: :class:`Ranges` on these arrays (from :mod:`jaxsubset.ranges`).
        capacity: static Python int, the padded length; default ``ranges.max_count``.

    Returns:
        :class:`Subsets` with the ranges' batch shape.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> r = jaxsubset.ranges.select(x, jnp.array([1.0, 7.5]), jnp.array([3.0, 20.0]))
        >>> jaxsubset.gather(x, x, r, capacity=4).x.tolist()
        [[1.0, 2.0, 0.0, 0.0], [8.0, 9.0, 0.0, 0.0]]
    """
    func = "gather"
    if not isinstance(ranges, Ranges):
        raise TypeError(f"{func}: `ranges` must be a jaxsubset.Ranges, got {type(ranges).__name__}")
    if capacity is None:
        if ranges.max_count is None:
            raise TypeError(
                f"{func}: `capacity` is required for ranges whose size depends on data "
                "(see jaxsubset.required_capacity)"
            )
        capacity = max(ranges.max_count, 1)
        slots = _bucket.bucket(capacity, _bucket.MIN_K)  # a derived capacity: few programs
    else:
        slots = None
    capacity = static_int(capacity, "capacity", func)
    x, y = as_xy(x, y, func, keep_host=keep_host(None, x, y, ranges.start, ranges.count))
    start, count = ranges.start, ranges.count
    idt = np.dtype(index_dtype())

    def widen(r: tuple[Any, Any]) -> tuple[Any, Any]:
        # user ranges wider than the index dtype (int64/uint64 in 32-bit mode): clipped
        # exactly on the host; `gather_padded` clips the others overflow-safely
        if all(np.can_cast(np.asarray(a).dtype, idt) for a in r):
            return r
        return host_range(np.asarray(r[0]), np.asarray(r[1]), x.shape[0], func)

    start, count = now_or_traced((start, count), widen)
    if eager(None, x, y, start, count) and x.shape[0] > 0:
        return bucketed_gather(x, y, start, count, capacity, slots=slots)
    pieces = pieces_of(ranges)
    if (
        pieces is not None
        and capacity == pieces[1]
        and x.shape[0] == y.shape[0] == pieces[0] * pieces[1] + pieces[2] * pieces[3]
    ):  # the consecutive pieces of `ranges.chunks` on these arrays: reshaped, not gathered
        return split(x, y, start, count, pieces)
    return gather_padded(x, y, start, count, capacity)


def from_ranges(
    x: ArrayLike,
    y: ArrayLike,
    start: ArrayLike,
    count: ArrayLike,
    *,
    capacity: int,
) -> Subsets:
    """Subsets from explicit index ranges ``[start, start + count)``: arbitrary segments.

    Every other constructor ends here. Ranges are clipped to the data: a range that runs past
    the end is shortened (never shifted), a negative count is empty.

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        start: ``(*batch)`` int, first index of each range (traced is fine).
        count: ``(*batch)`` int, number of points of each range (traced is fine).
        capacity: static Python int, the padded length ``L`` of every subset.

    Returns:
        :class:`Subsets` with batch shape ``broadcast(start, count).shape``.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(6.0)
        >>> s = jaxsubset.from_ranges(x, x, jnp.array([1, 4]), jnp.array([2, 5]), capacity=4)
        >>> s.count.tolist(), s.sum().tolist()
        ([2, 2], [3.0, 9.0])
    """
    func = "from_ranges"
    capacity = static_int(capacity, "capacity", func)
    x, y = as_xy(x, y, func, keep_host=keep_host(None, x, y, start, count))
    start, count = host_range(start, count, x.shape[0], func)
    if eager(None, x, y, start, count) and x.shape[0] > 0:
        return bucketed_gather(x, y, start, count, capacity)
    return gather_padded(x, y, start, count, capacity)


@bucketed(static_argnames=("capacity",))
def eager_gather(
    x: Array, y: Array, ranges: tuple[Array, Array], n: Array, *, capacity: int
) -> Subsets:
    """The gather of ranges on ``x``/``y`` past their ``n`` real points (eager: padded)."""
    return gather_padded(x, y, ranges[0], ranges[1], capacity, length=n)


def bucketed_gather(
    x: Array,
    y: Array,
    start: Any,
    count: Any,
    capacity: int,
    *,
    k: int | None = None,
    slots: int | None = None,
) -> Subsets:
    """Concrete ranges gathered by :func:`eager_gather`, one program per bucket of shapes.

    ``start``/``count`` broadcast to the batch shape; ``k``: keep only the first ``k`` of a
    1-D batch (ranges computed for the bucket); ``slots``: gather into this many slots
    (>= ``capacity``, a capacity of the bucket), then cut to ``capacity``.
    """
    idt = np.dtype(index_dtype())
    s, c = (np.asarray(a).astype(idt) for a in np.broadcast_arrays(start, count))
    cut = None if slots is None else capacity
    return eager_gather(x, y, (s, c), capacity=slots or capacity, keep=k, cut_capacity=cut)


def host_range(start: Any, count: Any, n: int, func: str) -> tuple[Array, Array]:
    """``[start, start + count)`` clipped to ``[0, n)`` (never shifted), exact on the host.

    Both concrete: the clipped range in Python ints. Otherwise each is cast to the index
    dtype (a concrete one clipped to it first) and ``gather_padded`` clips overflow-safely.
    """
    big = int(np.iinfo(index_dtype()).max)
    return now_or_traced(
        (start, count),
        lambda r: clipped_range(r[0], r[1], n, func),
        lambda r: (
            host_index(r[0], "start", func, -big, big),
            host_index(r[1], "count", func, -big, big),
        ),
    )


def clipped_range(start: Any, count: Any, n: int, func: str) -> tuple[Array, Array]:
    """:func:`host_range` of concrete ``start`` and ``count``: clipped in Python ints."""
    s = np.asarray(start)
    c = np.asarray(count)
    for a, nm in ((s, "start"), (c, "count")):
        if a.dtype.kind not in "iu" and not (
            a.dtype == object and all(isinstance(e, int) for e in a.ravel().tolist())
        ):
            raise TypeError(f"{func}: `{nm}` must hold integers, got dtype {a.dtype}")
    shape = np.broadcast_shapes(s.shape, c.shape)
    # 1-D object arrays of Python ints: a ufunc on a 0-d one returns a scalar, and the
    # next one would convert a Python int beyond int64 (2**70, uint64 2**63) to C long
    s, c = (np.broadcast_to(a.astype(object), shape).reshape(-1) for a in (s, c))
    stop = np.asarray(s + np.maximum(c, 0), object)
    s0 = np.asarray(np.minimum(np.maximum(s, 0), n), object)
    s1 = np.asarray(np.minimum(np.maximum(stop, s0), n), object)
    idt = index_dtype()
    return (  # device_put: no program per shape, unlike jnp.asarray
        jax.device_put(s0.astype(np.int64).astype(idt).reshape(shape)),
        jax.device_put((s1 - s0).astype(np.int64).astype(idt).reshape(shape)),
    )


def host_index(value: Any, name: str, func: str, lo: int, hi: int, xp: Any = jnp) -> Array:
    """Concrete integer index bounds clipped EXACTLY to ``[lo, hi]`` on the host, then cast.

    Python ints, int64 and uint64 of any size keep their meaning (``2**40`` past the end of
    the data is clipped to the end, never wrapped) in both JAX modes. Traced bounds are cast
    to the index dtype (they already hold its values). ``xp=np``: a NumPy result.
    """
    return now_or_traced(
        value,
        lambda v: clipped_index(np.asarray(v), name, func, lo, hi, xp),
        lambda v: as_int_bounds(v, name, func).astype(index_dtype()),
    )


def clipped_index(v: np.ndarray, name: str, func: str, lo: int, hi: int, xp: Any) -> Array:
    """:func:`host_index` of a concrete ``v``."""
    ok = v.dtype.kind in "iu" or (
        v.dtype == object and all(isinstance(e, int) for e in v.ravel().tolist())
    )
    if not ok or v.dtype.kind == "b":
        raise TypeError(f"{func}: `{name}` must hold integers, got dtype {v.dtype}")
    if v.dtype.kind == "i" or (v.dtype.kind == "u" and v.dtype.itemsize < 8):
        c = np.clip(v.astype(np.int64), lo, hi)
    else:
        c = np.vectorize(lambda e: min(max(int(e), lo), hi), otypes=[np.int64])(v)
    return xp.asarray(np.asarray(c, np.int64).astype(index_dtype()))


def isolate_ranges(
    x: ArrayLike,
    start: ArrayLike | None,
    stop: ArrayLike | None,
    *,
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges ``[start:stop]`` with Python slice semantics (see :func:`jaxsubset.isolate`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> r = jaxsubset.ranges.isolate(jnp.arange(10.0), -3, None)
        >>> r.start.tolist(), r.count.tolist()
        (7, 3)
    """
    return resolve_isolate(x, start, stop, length=length, func="ranges.isolate")


def resolve_isolate(
    x: ArrayLike,
    start: ArrayLike | None,
    stop: ArrayLike | None,
    *,
    length: ArrayLike | None = None,
    func: str = "ranges.isolate",
) -> Ranges:
    """:func:`isolate_ranges` with the caller's name (``func``) for messages."""
    x = as_x(x, func)
    n = x.shape[0]
    if eager(length, x, start, stop):
        return host_isolate(start, stop, n, func)
    n_real = real_length(length, x.shape[0], func)

    def norm(bound: Any, name: str, default: Array) -> Array:
        if bound is None:
            return default
        # [-N, N] holds every distinct slice bound: beyond it Python clips to the ends anyway
        b = host_index(bound, name, func, -n, n)
        return jnp.clip(jnp.where(b < 0, b + n_real, b), 0, n_real)

    i0 = norm(start, "start", jnp.zeros((), index_dtype()))
    i1 = norm(stop, "stop", n_real)
    i0, i1 = jnp.broadcast_arrays(i0, i1)
    return Ranges(i0, jnp.maximum(i1 - i0, 0))


def host_isolate(start: Any, stop: Any, n: int, func: str) -> Ranges:
    """:func:`isolate_ranges` of concrete bounds, on the host (no program per shape)."""
    idt = np.dtype(index_dtype())

    def norm(bound: Any, name: str, default: int) -> np.ndarray:
        if bound is None:
            return np.asarray(default, np.int64)
        b = np.asarray(host_index(bound, name, func, -n, n, xp=np), np.int64)
        return np.clip(np.where(b < 0, b + n, b), 0, n)

    i0, i1 = np.broadcast_arrays(norm(start, "start", 0), norm(stop, "stop", n))
    return Ranges(
        jax.device_put(i0.astype(idt)), jax.device_put(np.maximum(i1 - i0, 0).astype(idt))
    )


def isolate(
    x: ArrayLike,
    y: ArrayLike,
    start: ArrayLike | None,
    stop: ArrayLike | None,
    *,
    capacity: int,
    length: ArrayLike | None = None,
) -> Subsets:
    """Subsets ``x[start:stop]``, ``y[start:stop]`` with Python slice semantics and traced bounds.

    Negative bounds count from the end, bounds past either end are clipped, ``stop <= start``
    is empty, ``None`` means the start/end of the data. Never a shifted window: a range near the
    end is shorter, not moved (unlike ``lax.dynamic_slice``).

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        start: scalar or ``(*batch)`` int (or ``None``), first index.
        stop: scalar or ``(*batch)`` int (or ``None``), one past the last index.
        capacity: static Python int, the padded length of every subset.
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``broadcast(start, stop).shape``.

    Example:
        >>> import jax, jax.numpy as jnp, jaxsubset
        >>> x = jnp.linspace(0.0, 1.0, 11)
        >>> f = jax.jit(lambda i, j: jaxsubset.isolate(x, x, i, j, capacity=4).x)
        >>> f(2, 5).tolist()
        [0.2, 0.3, 0.4, 0.0]
        >>> f(-2, 100).tolist()  # the last two points; not a window shifted back
        [0.9, 1.0, 0.0, 0.0]
    """
    capacity = static_int(capacity, "capacity", "isolate")
    x, y = as_xy(x, y, "isolate")
    r = resolve_isolate(x, start, stop, length=length, func="isolate")
    if eager(length, x, y, r) and x.shape[0] > 0:  # the ranges: scalar work, no N-sized op
        return bucketed_gather(x, y, r.start, r.count, capacity)
    return to_subsets(x, y, r, capacity)


def chunk_ranges(
    x: ArrayLike,
    n: int | None = None,
    *,
    size: int | None = None,
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges of ``n`` ``array_split`` pieces or pieces of ``size`` (see :func:`chunks`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> jaxsubset.ranges.chunks(jnp.arange(7.0), size=3).count.tolist()
        [3, 3, 1]
    """
    return resolve_chunks(x, n, size=size, length=length, func="ranges.chunks")


def resolve_chunks(
    x: ArrayLike,
    n: int | None = None,
    *,
    size: int | None = None,
    length: ArrayLike | None = None,
    func: str = "ranges.chunks",
) -> Ranges:
    """:func:`chunk_ranges` with the caller's name (``func``) for messages."""
    n, size = chunk_args(n, size, func)
    x = as_x(x, func)
    big_n = x.shape[0]
    idt = index_dtype()
    if n is not None:
        bound = -(-big_n // n)
        if length is None:
            q, r = divmod(big_n, n)
            i = np.arange(n)
            start_h, count_h = i * q + np.minimum(i, r), q + (i < r)
            layout = (r, q + 1, n - r, q) if r else (n, q, 0, q)
            # cast on the host: no program per number of pieces (in a trace: constants)
            out = Ranges(
                jax.device_put(start_h.astype(idt)), jax.device_put(count_h.astype(idt)), bound
            )
            return with_pieces(out, layout)
        m = real_length(length, big_n, func)
        qj, rj = m // n, m % n
        ij = jnp.arange(n, dtype=idt)
        return Ranges(ij * qj + jnp.minimum(ij, rj), qj + (ij < rj).astype(idt), bound)
    assert size is not None  # for mypy: `chunk_args` gives exactly one
    k = -(-big_n // size)
    m = real_length(length, big_n, func)
    start = jnp.arange(k, dtype=idt) * size
    out = Ranges(start, jnp.clip(m - start, 0, size), size)
    if length is None:  # static pieces: size points each, the last one ragged
        out = with_pieces(out, (big_n // size, size, int(big_n % size > 0), big_n % size))
    return out


def chunk_args(n: Any, size: Any, func: str) -> tuple[int | None, int | None]:
    """Exactly one of ``n`` and ``size``, as a checked static int."""
    if (n is None) == (size is None):
        raise TypeError(
            f"{func}: pass exactly one of `n` (number of pieces) and `size`, got "
            f"n={n!r}, size={size!r}"
        )
    if n is not None:
        return static_int(n, "n", func), None
    return None, static_int(size, "size", func)


def bucketed_chunks(x: Array, y: Array, n: Any, size: Any) -> Subsets:
    """Eager :func:`chunks`: the pieces of the real N, gathered at the bucket's capacity."""
    n, size = chunk_args(n, size, "chunks")
    big_n = x.shape[0]
    nb = _bucket.bucket(big_n)
    if n is not None:
        q, rem = divmod(big_n, n)
        i = np.arange(n)
        start, count = i * q + np.minimum(i, rem), q + (i < rem)
        cap = max(-(-big_n // n), 1)
        slots = _bucket.bucket(max(-(-nb // n), 1), _bucket.MIN_K)  # nearby n share it
        return bucketed_gather(x, y, start, count, cap, slots=slots)
    assert size is not None
    start = np.arange(-(-nb // size)) * size  # the bucket's pieces; the real ones first
    count = np.clip(big_n - start, 0, size)
    return bucketed_gather(x, y, start, count, size, k=-(-big_n // size))


def chunks(
    x: ArrayLike,
    y: ArrayLike,
    n: int | None = None,
    *,
    size: int | None = None,
    length: ArrayLike | None = None,
) -> Subsets:
    """The whole dataset in ``n`` pieces (``numpy.array_split``) or in pieces of ``size``.

    With ``n``: the first ``N % n`` pieces have ``N // n + 1`` points, the rest ``N // n``
    (``n > N`` gives empty pieces, as ``array_split`` does). With ``size``: ``ceil(N / size)``
    pieces of ``size`` points, the last one shorter. The capacity is derived (the longest
    piece), so nothing can overflow.

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        n: static Python int, the number of pieces (exactly one of ``n`` and ``size``).
        size: static Python int, the number of points per piece.
        length: optional traced number of real points (see :func:`jaxsubset.pack`); the pieces
            then split ``length`` points, and the number of pieces/capacity follow from ``N``.

    Returns:
        :class:`Subsets` with batch shape ``(n,)`` (or ``(ceil(N / size),)``).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> s = jaxsubset.chunks(jnp.arange(7.0), jnp.arange(7.0), 3)
        >>> s.count.tolist(), s.start.tolist(), s.capacity
        ([3, 2, 2], [0, 3, 5], 3)
    """
    x, y = as_xy(x, y, "chunks", keep_host=keep_host(length, x, y))
    if eager(length, x, y) and x.shape[0] > 0:
        return bucketed_chunks(x, y, n, size)
    r = resolve_chunks(x, n, size=size, length=length, func="chunks")
    big_n = x.shape[0]
    if length is None and big_n > 0:
        # Without a traced `length` the pieces are consecutive with static sizes: n1 pieces
        # of s1 points, then n2 of s2 < s1. Reshaping is a free view under jit and its all-True
        # mask folds away, where the gather costs a copy and masked reductions (the same
        # Subsets, bit for bit; the speed-up is in BENCHMARKS.md).
        if n is not None:
            q, rem = divmod(big_n, n)
            layout = (rem, q + 1, n - rem, q) if rem else (n, q, 0, q)
        else:
            assert size is not None  # for mypy: chunk_ranges checked that exactly one is given
            layout = (big_n // size, size, int(big_n % size > 0), big_n % size)
        return split(x, y, r.start, r.count, layout)
    assert r.max_count is not None  # for mypy: chunk ranges always have a bound
    return to_subsets(x, y, r, max(r.max_count, 1))


@functools.partial(jax.jit, static_argnames=("layout",))
def split(
    x: Array, y: Array, start: Array, count: Array, layout: tuple[int, int, int, int]
) -> Subsets:
    """Consecutive pieces by reshape: ``n1`` of ``s1`` points, then ``n2`` of ``s2`` (padded)."""
    n1, s1, n2, s2 = layout

    def pieces(a: Array) -> Array:
        head = a[: n1 * s1].reshape((n1, s1) + a.shape[1:])
        if n2 == 0:
            return head
        tail = a[n1 * s1 :].reshape((n2, s2) + a.shape[1:])
        tail = jnp.pad(tail, [(0, 0), (0, s1 - s2)] + [(0, 0)] * (a.ndim - 1))
        return jnp.concatenate([head, tail])

    # From static sizes only (no large literal): for equal pieces a broadcast True that XLA
    # folds out of every masked reduction.
    mask = jnp.ones((n1 + n2, s1), bool)
    if n2:
        mask = mask.at[n1:].set(jnp.arange(s1) < s2)
    return Subsets(x=pieces(x), y=pieces(y), mask=mask, start=start, count=count, _view=True)


def sliding_ranges(
    x: ArrayLike,
    size: int,
    *,
    step: int = 1,
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges of fixed-size sliding windows (see :func:`jaxsubset.sliding`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> jaxsubset.ranges.sliding(jnp.arange(6.0), 4).start.tolist()
        [0, 1, 2]
    """
    return resolve_sliding(x, size, step=step, length=length, func="ranges.sliding")


def resolve_sliding(
    x: ArrayLike,
    size: int,
    *,
    step: int = 1,
    length: ArrayLike | None = None,
    func: str = "ranges.sliding",
) -> Ranges:
    """:func:`sliding_ranges` with the caller's name (``func``) for messages."""
    x = as_x(x, func)
    size = static_int(size, "size", func)
    step = static_int(step, "step", func)
    big_n = x.shape[0]
    if size > big_n:
        raise ValueError(f"{func}: `size` must be <= len(x)={big_n}, got {size}")
    k = (big_n - size) // step + 1
    idt = index_dtype()
    if eager(length, x):  # on the host: no program per number of windows
        start_h = (np.arange(k) * step).astype(idt)
        return Ranges(jax.device_put(start_h), jax.device_put(np.full((k,), size, idt)), size)
    start = jnp.arange(k, dtype=idt) * step
    if length is None:
        count = jnp.full((k,), size, idt)
    else:
        m = real_length(length, big_n, func)
        count = jnp.where(start + size <= m, size, 0).astype(idt)
    return Ranges(start, count, size)


def sliding(
    x: ArrayLike,
    y: ArrayLike,
    size: int,
    *,
    step: int = 1,
    length: ArrayLike | None = None,
) -> Subsets:
    """Fixed-size sliding windows: ``numpy.lib.stride_tricks.sliding_window_view(y, size)[::step]``.

    ``K = (N - size) // step + 1`` full windows, window ``k`` starting at ``k * step``.

    Args:
        x: ``(N,)`` sample positions.
        y: ``(N, *channels)`` values.
        size: static Python int, points per window (``1 <= size <= N``).
        step: static Python int, points between window starts.
        length: optional traced number of real points (see :func:`jaxsubset.pack`); windows
            not entirely inside it are empty.

    Returns:
        :class:`Subsets` with batch shape ``(K,)`` and capacity ``size``.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> s = jaxsubset.sliding(jnp.arange(6.0), jnp.arange(6.0), 3, step=2)
        >>> s.start.tolist(), s.mean().tolist()
        ([0, 2], [1.0, 3.0])
    """
    x, y = as_xy(x, y, "sliding", keep_host=keep_host(length, x, y))
    if eager(length, x, y) and x.shape[0] > 0:
        size = static_int(size, "size", "sliding")
        step = static_int(step, "step", "sliding")
        big_n = x.shape[0]
        if size > big_n:
            raise ValueError(f"sliding: `size` must be <= len(x)={big_n}, got {size}")
        # the bucket's windows, the real (full) ones first; those past N are cut off
        start = np.arange((_bucket.bucket(big_n) - size) // step + 1) * step
        count = np.where(start + size <= big_n, size, 0)
        return bucketed_gather(x, y, start, count, size, k=(big_n - size) // step + 1)
    r = resolve_sliding(x, size, step=step, length=length, func="sliding")
    assert r.max_count is not None  # for mypy: sliding ranges carry their size
    if length is None:
        return full_windows(x, y, r.start, r.count, r.max_count)
    return to_subsets(x, y, r, r.max_count)


@functools.partial(jax.jit, static_argnames=("size",))
def full_windows(x: Array, y: Array, start: Array, count: Array, size: int) -> Subsets:
    """Windows known to be full and inside the data: the gather without masking.

    Every window holds ``size`` points from ``start <= N - size``, so the mask is a constant
    all-True that XLA folds out of the reductions and of a user's ``where(mask, ...)``, and
    no slot needs zeroing (BENCHMARKS.md measures it against the masked gather).
    """
    xs, ys = read_rows((x, y), start, size)  # one row read per window
    return Subsets(x=xs, y=ys, mask=jnp.ones(xs.shape, bool), start=start, count=count)
