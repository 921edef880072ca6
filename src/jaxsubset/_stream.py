"""Larger-than-memory data streamed block by block through ONE compiled kernel, exactly.

How it stays exact and bounded:

1. Every subset is a global index range ``[start, start + count)`` (the library's invariant).
   Chunks and sliding windows get theirs by arithmetic; x-ranges, bins and x-width (rolling)
   windows by counting, in one x-only pass, how many points lie below each bound
   (``searchsorted`` block by block, a pointer sweep over sorted bounds). Rolling windows anchored
   at every point use two lagging x cursors instead, so no bound array of length N is built.
2. The data pass cuts the points into windows ``[g0, g0 + B + L)``: a block of ``B`` points
   plus a look-ahead halo of ``L = capacity`` points (from as many following source pieces as
   needed, so blocks may be smaller than a window). Each subset is computed in the block holding
   its start; it is held in full (or, if it overflows, its first ``L`` points, exactly as in
   memory) because ``start - g0 < B`` and ``L <= halo``.
3. Blocks have one shape (the last one padded with zeros that no range reads) and the ranges
   go in groups of one static size, so one compiled kernel serves the whole stream. A
   background thread reads the next block while the device computes this one: memory-mapped
   arrays are copied once, straight into reused 64-byte-aligned buffers that XLA's CPU client
   reads in place (a buffer is refilled only once the kernel that read it has finished).
4. Chunks aligned with the blocks are a reshape of the block (no halo, no gather), and sliding
   windows whose size is a small multiple of the step are combined on the host from chunks of
   ``step`` points (sums, counts, minima, maxima), so every point is read once.
"""

import dataclasses
import functools
import math
import mmap
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np

from ._checks import reraise
from ._ranges import _host_anchored_lower, _host_key, _host_lower, _keys, _sides
from ._subsets import Subsets
from ._validate import check_closed, check_int_fits, check_nan_policy, index_dtype, static_int


STATISTICS = ("sum", "mean", "var", "std", "min", "max", "median", "argmin", "argmax")
KINDS = ("chunks", "sliding", "rolling", "bins", "select")
_KIND_ARGS = {
    "chunks": {"n", "size"},
    "sliding": {"size", "step"},
    "rolling": {"width", "at", "closed"},
    "bins": {"edges"},
    "select": {"lo", "hi", "closed"},
}
Side = Literal["left", "right"]  # of searchsorted
_GATHER_BUDGET = 1 << 21  # ranges per kernel call * capacity: bounds the gathered slab


# ---------------------------------------------------------------------------- sources
def _side(side: str) -> Side:
    """``side`` as ``searchsorted``'s literal."""
    if side == "left":
        return "left"
    if side == "right":
        return "right"
    raise ValueError(f"`side` must be 'left' or 'right', got {side!r}")


def _other(side: str) -> Side:
    """The other side: bounds up to a piece's last point are resolved inside the piece."""
    return "right" if side == "left" else "left"


def _canon(dtype: Any) -> np.dtype:
    """The dtype JAX would give an array of ``dtype`` (float64 -> float32 without x64)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dtype)))


class _Source:
    """Where blocks come from: ``pieces()`` yields ``(x, y)`` NumPy pieces of any size."""

    length: int | None = None
    reiterable: bool = True
    name = "source"

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        raise NotImplementedError

    def x_pieces(self) -> Iterator[np.ndarray]:
        for x, _ in self.pieces():
            yield x


class _ArraySource(_Source):
    """Random-access arrays: in memory, or memory-mapped ``.npy`` files."""

    length: int

    def __init__(self, x: Any, y: Any, read_size: int, func: str, name: str) -> None:
        self.x, self.y, self.read_size, self.name = x, y, read_size, name
        if x.ndim != 1:
            raise ValueError(f"{func}: `x` must be 1-D, got shape {tuple(x.shape)}")
        if y.ndim < 1 or y.shape[0] != x.shape[0]:
            raise ValueError(
                f"{func}: `x` and `y` must have the same length, got len(x)={x.shape[0]} and "
                f"y.shape={tuple(y.shape)}"
            )
        _check_numeric(x.dtype, "x", func)
        _check_numeric(y.dtype, "y", func)
        self.length = int(x.shape[0])
        self.xdt, self.ydt = _canon(x.dtype), _canon(y.dtype)

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        release = _Release(self.x, self.y)
        for a in range(0, self.length, self.read_size):
            b = a + self.read_size
            # pieces two back are copied into blocks by now: drop their pages from this process
            release(a - 2 * self.read_size, a - self.read_size)
            yield (
                np.asarray(self.x[a:b], dtype=self.xdt),
                np.asarray(self.y[a:b], dtype=self.ydt),
            )

    def x_pieces(self) -> Iterator[np.ndarray]:
        release = _Release(self.x)
        for a in range(0, self.length, self.read_size):
            release(a - 2 * self.read_size, a - self.read_size)
            yield np.asarray(self.x[a : a + self.read_size], dtype=self.xdt)

    def windows(
        self, block: int, halo: int, with_x: bool, buffers: "_Buffers"
    ) -> Iterator[tuple[int, np.ndarray | None, np.ndarray, int, bool]]:
        """What :func:`_windows` yields, copied straight from the arrays into pooled buffers.

        One strided copy per point (the ``y`` column of an interleaved ``(N, 2)`` memory map
        lands contiguous in an aligned buffer that XLA then reads without a copy of its own),
        instead of a piece copy, a window copy and a host-to-XLA copy. Rows before the next
        window's start are released from memory maps as soon as they are copied.
        """
        big_n, width = self.length, block + halo
        release = _Release(self.x, self.y) if with_x else _Release(self.y)
        tail = self.y.shape[1:]
        for g0 in range(0, big_n, block):
            n = min(width, big_n - g0)
            bx = buffers.take((width,), self.xdt) if with_x else None
            by = buffers.take((width,) + tail, self.ydt)
            for dst, src in ((bx, self.x), (by, self.y)):
                if dst is not None:
                    np.copyto(dst[:n], src[g0 : g0 + n], casting="unsafe")
                    dst[n:] = 0  # the last window's padding, which no range reads
            release(g0, g0 + block)  # the next window starts at g0 + block
            yield g0, bx, by, n, g0 + block >= big_n


def _mmap_of(a: Any) -> Any:
    """The ``mmap.mmap`` behind a memory-mapped NumPy array, or None."""
    while a is not None:
        if isinstance(a, np.memmap):
            # never for copy-on-write maps ("c"): dropping their pages would lose the user's edits
            return getattr(a, "_mmap", None) if a.mode in ("r", "r+", "w+", "readonly") else None
        a = getattr(a, "base", None)
    return None


_ALIGN = 64  # bytes: XLA's CPU client reads a NumPy array this aligned in place, no copy


def _aligned_empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An uninitialised array whose data starts on an ``_ALIGN``-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    off = -raw.ctypes.data % _ALIGN
    return raw[off : off + nbytes].view(dtype).reshape(shape)


class _Buffers:
    """Host buffers for blocks, reused once the kernel that read them has finished.

    ``jax.device_put`` of an aligned buffer on the CPU backend aliases it (no copy), and on an
    accelerator the copy to the device runs asynchronously; either way a buffer may be written
    again only after the kernel that read it is done, which the stream knows when that kernel's
    results are home (:meth:`give`). Until then :meth:`take` allocates a new one, so the count is
    bounded by the blocks in flight (the prefetch depth plus a few) and nothing ever waits here.
    """

    def __init__(self) -> None:
        self.free: dict[tuple[tuple[int, ...], str], list[np.ndarray]] = {}
        self.lock = threading.Lock()

    def take(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        key = (tuple(shape), np.dtype(dtype).str)
        with self.lock:
            stack = self.free.get(key)
            if stack:
                return stack.pop()
        return _aligned_empty(shape, dtype)

    def give(self, *bufs: np.ndarray | None) -> None:
        with self.lock:
            for b in bufs:
                if b is not None:
                    self.free.setdefault((b.shape, b.dtype.str), []).append(b)


class _Release:
    """Tell the OS that rows already read from memory maps are not needed again.

    ``madvise(MADV_DONTNEED)`` unmaps those clean file pages from this process (they stay in
    the page cache), so streaming a file larger than memory keeps a bounded resident size.
    """

    def __init__(self, *arrays: Any) -> None:
        self.maps = []
        for a in arrays:
            mm = _mmap_of(a)
            if mm is None or not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
                continue
            base = np.frombuffer(mm, np.uint8).__array_interface__["data"][0]
            self.maps.append((a, mm, base))

    def __call__(self, a: int, b: int) -> None:
        a = max(a, 0)
        for arr, mm, base in self.maps:
            if b <= a or b > arr.shape[0]:
                continue
            first = arr[a:b].__array_interface__["data"][0] - base
            last = arr[b - 1 : b].__array_interface__["data"][0] - base + arr.itemsize
            lo = -(-first // mmap.PAGESIZE) * mmap.PAGESIZE
            hi = last // mmap.PAGESIZE * mmap.PAGESIZE
            if hi > lo:
                try:
                    mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
                except (OSError, ValueError):  # pragma: no cover - advisory only
                    pass


class _ParquetSource(_Source):
    """A Parquet file read in record batches (row groups), two columns."""

    def __init__(self, path: str, columns: Sequence[str], read_size: int, func: str) -> None:
        try:
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError(
                f"{func}: reading Parquet needs pyarrow; install the `parquet` extra "
                "(pip install 'jaxsubset[parquet]')"
            ) from None
        self.pq, self.path, self.read_size, self.name = pq, path, read_size, str(path)
        if len(columns) != 2 or not all(isinstance(c, str) for c in columns):
            raise TypeError(f"{func}: `columns` must be two column names, got {columns!r}")
        self.columns = list(columns)
        meta = pq.ParquetFile(path)
        names = meta.schema_arrow.names
        for c in self.columns:
            if c not in names:
                raise ValueError(f"{func}: column {c!r} not in {path} (columns: {names})")
        self.length = int(meta.metadata.num_rows)

    def _batches(self, cols: list[str]) -> Iterator[list[np.ndarray]]:
        pf = self.pq.ParquetFile(self.path)
        for batch in pf.iter_batches(batch_size=self.read_size, columns=cols):
            arrays = []
            for c in cols:
                a = batch.column(batch.schema.get_field_index(c)).to_numpy(zero_copy_only=False)
                arrays.append(np.asarray(a, dtype=_canon(a.dtype)))
            yield arrays

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for cols in self._batches(self.columns):
            yield cols[0], cols[1]

    def x_pieces(self) -> Iterator[np.ndarray]:
        for (x,) in self._batches(self.columns[:1]):
            yield x


class _IterSource(_Source):
    """Any iterable of ``(x, y)`` blocks, or a callable returning a fresh one."""

    def __init__(self, source: Any, func: str) -> None:
        self.source, self.func = source, func
        self.reiterable = callable(source) or isinstance(source, Sequence)
        self.used = False
        self.name = "iterable"

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        func = self.func
        if not self.reiterable:
            if self.used:
                raise TypeError(
                    f"{func}: this analysis reads the data twice (x first, to find the ranges), "
                    "but `source` is a one-shot iterator; pass a list of blocks or a function "
                    "returning a fresh iterator"
                )
            self.used = True
        it = self.source() if callable(self.source) else self.source
        for i, block in enumerate(it):
            if not isinstance(block, tuple | list) or len(block) != 2:
                raise TypeError(f"{func}: block {i} of `source` must be an (x, y) pair")
            x, y = np.asarray(block[0]), np.asarray(block[1])
            if x.ndim != 1 or y.ndim < 1 or y.shape[0] != x.shape[0]:
                raise ValueError(
                    f"{func}: block {i} must hold 1-D x and y of the same length, got "
                    f"x.shape={x.shape}, y.shape={y.shape}"
                )
            _check_numeric(x.dtype, "x", func)
            _check_numeric(y.dtype, "y", func)
            yield np.asarray(x, _canon(x.dtype)), np.asarray(y, _canon(y.dtype))


def _check_numeric(dtype: np.dtype, name: str, func: str) -> None:
    if np.dtype(dtype).kind not in "biuf":
        raise TypeError(f"{func}: `{name}` must be numeric, got dtype {dtype}")


def _is_path(v: Any) -> bool:
    return isinstance(v, str | os.PathLike)


def _open_npy(path: Any, func: str) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"{func}: cannot memory-map {os.fspath(path)!r} as .npy: {e}") from None


def open_source(source: Any, *, columns: Sequence[str], read_size: int, func: str) -> _Source:
    """Turn a user ``source`` into a :class:`_Source` (see :func:`stream` for the forms)."""
    if _is_path(source):
        path = os.fspath(source)
        if path.endswith((".parquet", ".pq")):
            return _ParquetSource(path, columns, read_size, func)
        arr = _open_npy(path, func)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(
                f"{func}: {path!r} must hold an (N, 2) array of (x, y) columns, got shape "
                f"{arr.shape}; pass a pair of paths for separate x and y files"
            )
        return _ArraySource(arr[:, 0], arr[:, 1], read_size, func, path)
    if isinstance(source, tuple | list) and len(source) == 2:
        a, b = source
        if _is_path(a) and _is_path(b):
            return _ArraySource(_open_npy(a, func), _open_npy(b, func), read_size, func, str(a))
        if isinstance(a, np.ndarray | jax.Array) and isinstance(b, np.ndarray | jax.Array):
            a = a if isinstance(a, np.ndarray) else np.asarray(a)
            b = b if isinstance(b, np.ndarray) else np.asarray(b)
            return _ArraySource(a, b, read_size, func, "arrays")
    if callable(source) or isinstance(source, Iterable):
        return _IterSource(source, func)
    raise TypeError(
        f"{func}: `source` must be a .npy/.parquet path, a pair of .npy paths, a pair of arrays, "
        f"or an iterable of (x, y) blocks, got {type(source).__name__}"
    )


# ---------------------------------------------------------------------------- ranges by counting
def _checked_x(pieces: Iterator[np.ndarray], func: str) -> Iterator[np.ndarray]:
    """Pass x pieces through, raising if x holds NaN or is not sorted across the stream."""
    prev = None
    g = 0
    for xp in pieces:
        if xp.dtype.kind == "f":
            nan = np.isnan(xp)
            if nan.any():
                raise ValueError(f"{func}: `x` holds NaN at index {g + int(np.argmax(nan))}")
        if xp.size:
            if prev is not None and xp[0] < prev:
                raise ValueError(
                    f"{func}: `x` must be sorted ascending, but x[{g - 1}]={prev!r} > "
                    f"x[{g}]={xp[0].item()!r}"
                )
            bad = xp[1:] < xp[:-1]
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{func}: `x` must be sorted ascending, but x[{g + i}]={xp[i].item()!r} > "
                    f"x[{g + i + 1}]={xp[i + 1].item()!r}"
                )
            prev = xp[-1].item()
        g += xp.size
        yield xp


class _Counter:
    """``C(v) = #{x < v}`` (side "left") or ``#{x <= v}`` (side "right") over x pieces.

    Bounds must arrive non-decreasing; pieces are consumed lazily from an own x iterator, so
    several counters can lag behind one another over the same source (bounded memory).
    """

    def __init__(self, pieces: Iterator[np.ndarray], side: str) -> None:
        self.it, self.side, self.other = pieces, _side(side), _other(side)
        self.cur: np.ndarray | None = None
        self.g0 = 0
        self.done = False

    def resolve(self, v: np.ndarray) -> np.ndarray:
        out = np.empty(v.shape[0], np.int64)
        i = 0
        while i < v.shape[0]:
            if self.cur is None:
                if self.done:
                    out[i:] = self.g0
                    break
                try:
                    self.cur = next(self.it)
                except StopIteration:
                    self.done = True
                    continue
                if self.cur.size == 0:
                    self.cur = None
                    continue
            cur = self.cur
            # the bounds resolved inside this piece: those some point of it is not counted for
            j = i + int(np.searchsorted(v[i:], cur[-1], side=self.other))
            out[i:j] = self.g0 + np.searchsorted(cur, v[i:j], side=self.side)
            i = j
            if i < v.shape[0]:
                self.g0 += cur.size
                self.cur = None
        return out


class _Sweep:
    """``C(v)`` for a fixed set of bounds (any order), fed the x pieces in order."""

    def __init__(self, bounds: np.ndarray, side: str) -> None:
        flat = np.ravel(bounds)
        self.order = np.argsort(flat, kind="stable")
        self.v = flat[self.order]
        self.side, self.other = _side(side), _other(side)
        self.out = np.empty(self.v.shape[0], np.int64)
        self.done = 0

    def feed(self, g0: int, xp: np.ndarray) -> None:
        if xp.size == 0 or self.done == self.v.shape[0]:
            return
        i = self.done
        j = i + int(np.searchsorted(self.v[i:], xp[-1], side=self.other))
        self.out[i:j] = g0 + np.searchsorted(xp, self.v[i:j], side=self.side)
        self.done = j

    def finish(self, n: int, shape: tuple[int, ...]) -> np.ndarray:
        self.out[self.done :] = n
        vals = np.empty_like(self.out)
        vals[self.order] = self.out
        return vals.reshape(shape)


def _count_bounds(
    source: _Source, jobs: list[tuple[np.ndarray, str]], func: str
) -> tuple[list[np.ndarray], int]:
    """``C(bounds, side)`` for several bound arrays (any order) in ONE x pass; also N."""
    sweeps = [_Sweep(b, side) for b, side in jobs]
    n = 0
    for xp in _checked_x(source.x_pieces(), func):
        xk = _x_keys(xp, func)
        for sw in sweeps:
            sw.feed(n, xk)
        n += xp.size
    return [sw.finish(n, np.shape(b)) for sw, (b, _) in zip(sweeps, jobs, strict=True)], n


# ---------------------------------------------------------------------------- range providers
class _Regular:
    """Ranges ``k * step .. k * step + size`` by arithmetic: chunks of ``size``, sliding windows.

    ``full_only``: only windows entirely inside the data (sliding); else the last is shorter.
    """

    def __init__(self, step: int, size: int, full_only: bool) -> None:
        self.step, self.size, self.full_only, self.k = step, size, full_only, 0

    def take(self, hi: float, n_end: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ranges starting below ``hi`` among ``n_end`` points (None: the end is unknown).

        ``hi`` is finite or ``n_end`` known: the last block of a stream knows where it ends.
        """
        ends = [math.ceil(hi / self.step)] if math.isfinite(hi) else []
        if n_end is not None:
            if self.full_only:
                ends.append((n_end - self.size) // self.step + 1 if n_end >= self.size else 0)
            else:
                ends.append(-(-n_end // self.step))
        k1 = max(self.k, min(ends))
        k = np.arange(self.k, k1, dtype=np.int64)
        self.k = k1
        start = k * self.step
        if n_end is None:
            count = np.full(k.shape, self.size, np.int64)
        else:
            count = np.clip(n_end - start, 0, self.size)
        return start, count, k


class _Sorted:
    """Ranges from an iterator of ``(start, count, index)`` chunks, starts non-decreasing."""

    def __init__(self, chunks: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        self.chunks = chunks
        self.buf: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.exhausted = False

    def take(self, hi: float, n_end: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        while not self.exhausted and (not self.buf or self.buf[-1][0][-1] < hi):
            try:
                chunk = next(self.chunks)
            except StopIteration:
                self.exhausted = True
                break
            if chunk[0].size:
                self.buf.append(chunk)
        if not self.buf:
            e = np.empty(0, np.int64)
            return e, e, e
        start, count, idx = (np.concatenate(a) for a in zip(*self.buf, strict=True))
        cut = int(np.searchsorted(start, hi, side="left"))
        self.buf = [(start[cut:], count[cut:], idx[cut:])] if cut < start.size else []
        return start[:cut], count[:cut], idx[:cut]


def _sorted_once(start: np.ndarray, count: np.ndarray) -> _Sorted:
    start, count = np.ravel(start).astype(np.int64), np.ravel(count).astype(np.int64)
    order = np.argsort(start, kind="stable")
    return _Sorted(iter([(start[order], count[order], order.astype(np.int64))]))


def _x_keys(xp: np.ndarray, func: str) -> np.ndarray:
    """An x piece in the dtype JAX holds it in, as the resolver's order-preserving keys.

    Bounds are resolved with ``jaxsubset._ranges``' rules (``_host_key``), so the streamed
    ranges equal the in-memory ones: exact integer comparisons, directed rounding of bounds x's
    dtype cannot hold, -0.0 equal to 0.0.
    """
    check_int_fits(xp, "x", func)
    return _keys(np.asarray(xp, dtype=_canon(xp.dtype)), np)


def _key_pieces(pieces: Iterator[np.ndarray], func: str) -> Iterator[np.ndarray]:
    for xp in pieces:
        yield _x_keys(xp, func)


def _rolling_chunks(
    source: _Source, width: np.ndarray, xdt: np.dtype, closed: str, func: str
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Windows anchored at every point, pandas' row rule for ties (as ``ranges.rolling``).

    Row ``i``'s window ends at ``i + 1`` ("right"/"both") or at the first row tied with it
    ("left"/"neither"), and starts at ``#{x < x[i] - width}`` (or ``<=``), at most at ``i``.
    Lagging cursors over the keys of x find the starts (and the ends for open right sides), so
    no bound array of length N is built.
    """
    lo_side, hi_side = _sides(closed)
    lo_c = _Counter(_key_pieces(source.x_pieces(), func), lo_side)
    hi_c = None if hi_side == "right" else _Counter(_key_pieces(source.x_pieces(), func), "left")
    g = 0
    for xp in _checked_x(source.x_pieces(), func):
        a = np.asarray(xp, dtype=xdt)
        rows = np.arange(g, g + xp.size, dtype=np.int64)
        key, below = _host_lower(a, width, xdt, lo_side)
        start = lo_c.resolve(key)
        if below is not None:
            start = np.where(below, 0, start)
        stop = rows + 1 if hi_c is None else hi_c.resolve(_keys(a, np))
        start = np.minimum(np.minimum(start, rows), stop)
        yield start, stop - start, rows
        g += xp.size


def _flagged(count: np.ndarray, bound: tuple[Any, Any, Any], n: int) -> np.ndarray:
    """Counts of keyed bounds with the resolver's flags: below every x 0, above every x N."""
    _, below, above = bound
    if above is not None:
        count = np.where(np.broadcast_to(above, count.shape), n, count)
    if below is not None:
        count = np.where(np.broadcast_to(below, count.shape), 0, count)
    return count


def _key_bounds(
    value: Any, name: str, xdt: np.dtype, func: str, side: str
) -> tuple[np.ndarray, Any, Any]:
    """A bound as the resolver's ``(key, below, above)`` in x's key space for ``side``."""
    arr = np.asarray(value)
    if arr.dtype != object:
        _check_numeric(arr.dtype, name, func)
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"{func}: `{name}` holds NaN; a bound must be a number")
    return _host_key(arr, xdt, side)


def _x_dtype(source: _Source) -> np.dtype:
    if isinstance(source, _ArraySource):
        return source.xdt
    for xp in source.x_pieces():
        return xp.dtype
    return _canon(np.float64)


class _Plan:
    """What to compute: capacity ``L``, a range provider, the batch shape of the result."""

    def __init__(self, capacity: int, provider: Any, shape: tuple[int, ...] | None, per: int):
        self.capacity, self.provider, self.shape, self.per_block = capacity, provider, shape, per
        self.aligned: int | None = None  # chunk size when blocks hold whole chunks (fast path)


def plan(
    source: _Source,
    kind: str,
    kind_args: dict[str, Any],
    capacity: int | None,
    block: int,
    name: str = "stream",
) -> _Plan:
    """Ranges for ``kind`` over a stream (an x pass for the x-value kinds)."""
    func = f"{name}({kind!r})"
    if kind not in KINDS:
        raise ValueError(
            f"{name}: `kind` must be one of {', '.join(map(repr, KINDS))}, got {kind!r}"
        )
    extra = set(kind_args) - _KIND_ARGS[kind]
    if extra:
        raise TypeError(
            f"{func}: unexpected argument(s) {sorted(extra)}; {kind} takes "
            f"{sorted(_KIND_ARGS[kind])}"
        )
    if kind in ("chunks", "sliding"):
        if capacity is not None:
            raise TypeError(f"{func}: `capacity` is derived for {kind}; do not pass it")
        if kind == "sliding":
            if "size" not in kind_args:
                raise TypeError(f"{func}: missing the window `size`")
            size = static_int(kind_args["size"], "size", func)
            step = static_int(kind_args.get("step", 1), "step", func)
            return _Plan(size, _Regular(step, size, True), None, -(-block // step))
        n_arg, size_arg = kind_args.get("n"), kind_args.get("size")
        if (n_arg is None) == (size_arg is None):
            raise TypeError(
                f"{func}: pass exactly one of `n` (number of pieces) and `size`, got "
                f"n={n_arg!r}, size={size_arg!r}"
            )
        if size_arg is not None:
            size = static_int(size_arg, "size", func)
            pl = _Plan(size, _Regular(size, size, False), None, -(-block // size))
            pl.aligned = size
            return pl
        n = static_int(n_arg, "n", func)
        big_n = source.length
        if big_n is None:
            big_n = sum(xp.size for xp in source.x_pieces())
        q, r = divmod(big_n, n)
        i = np.arange(n, dtype=np.int64)
        prov = _sorted_once(i * q + np.minimum(i, r), q + (i < r))
        return _Plan(max(-(-big_n // n), 1), prov, (n,), max(1, -(-block // max(q, 1))))
    if capacity is None:
        raise TypeError(
            f"{func}: `capacity` is required for {kind} (subset sizes depend on the data); "
            "see jaxsubset.grow_capacity to find it automatically"
        )
    capacity = static_int(capacity, "capacity", func)
    xdt = _canon(_x_dtype(source))  # the dtype JAX holds x in: the keys of `_x_keys`
    per = max(1, min(block, _GATHER_BUDGET // capacity))
    if kind == "bins":
        if "edges" not in kind_args:
            raise TypeError(f"{func}: missing the bin `edges`")
        edges = np.asarray(kind_args["edges"])
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `edges` must be 1-D with at least 2 edges, got {edges.shape}"
            )
        e_left = _key_bounds(edges, "edges", xdt, func, "left")
        e_last = _key_bounds(edges[-1:], "edges", xdt, func, "right")
        if np.any(edges[1:] < edges[:-1]):
            raise ValueError(f"{func}: `edges` must increase monotonically")
        (left, last), n = _count_bounds(source, [(e_left[0], "left"), (e_last[0], "right")], func)
        left, last = _flagged(left, e_left, n), _flagged(last, e_last, n)
        right = np.concatenate([left[1:-1], last])
        return _Plan(
            capacity,
            _sorted_once(left[:-1], np.maximum(right - left[:-1], 0)),
            (edges.shape[0] - 1,),
            per,
        )
    closed = check_closed(kind_args.get("closed", "left" if kind == "select" else "right"), func)
    lo_side, hi_side = _sides(closed)
    if kind == "select":
        if "lo" not in kind_args or "hi" not in kind_args:
            raise TypeError(f"{func}: missing the x bounds `lo` and `hi`")
        lo = _key_bounds(kind_args["lo"], "lo", xdt, func, lo_side)
        hi = _key_bounds(kind_args["hi"], "hi", xdt, func, hi_side)
        return _plan_xrange(source, lo, hi, lo_side, hi_side, capacity, per, func)
    # rolling
    if "width" not in kind_args:
        raise TypeError(f"{func}: missing the window `width`")
    width = np.asarray(kind_args["width"])
    if width.dtype != object:
        _check_numeric(width.dtype, "width", func)
    if width.dtype.kind == "f" and np.isnan(width).any():
        raise ValueError(f"{func}: `width` holds NaN; a bound must be a number")
    if np.any(width < 0):
        raise ValueError(f"{func}: `width` must be >= 0, got {width!r}")
    at = kind_args.get("at")
    if at is None:
        if width.ndim != 0:
            raise ValueError(
                f"{func}: streaming windows at every point needs a scalar `width`, got shape "
                f"{width.shape}; pass explicit anchors `at` for per-window widths"
            )
        if not source.reiterable:
            source.pieces()  # raises the one-shot error
        chunks = _rolling_chunks(source, width, xdt, closed, func)
        return _Plan(capacity, _Sorted(chunks), None, per)
    anchors = np.asarray(at)
    if anchors.dtype != object:
        _check_numeric(anchors.dtype, "at", func)
    if anchors.dtype.kind == "f" and np.isnan(anchors).any():
        raise ValueError(f"{func}: `at` holds NaN; a bound must be a number")
    anchors, width = np.broadcast_arrays(anchors, width)
    hi = _host_key(anchors, xdt, hi_side)
    lo = _host_anchored_lower(anchors, width, xdt, lo_side)
    return _plan_xrange(source, lo, hi, lo_side, hi_side, capacity, per, func)


def _plan_xrange(
    source: _Source,
    lo: tuple,
    hi: tuple,
    lo_side: str,
    hi_side: str,
    capacity: int,
    per: int,
    func: str,
) -> _Plan:
    """Ranges ``#{x below lo} .. #{x below hi}`` of keyed bounds (as ``ranges.select``)."""
    lo_k, hi_k = np.broadcast_arrays(lo[0], hi[0])
    (start, stop), n = _count_bounds(source, [(lo_k, lo_side), (hi_k, hi_side)], func)
    start, stop = _flagged(start, lo, n), _flagged(stop, hi, n)
    return _Plan(capacity, _sorted_once(start, np.maximum(stop - start, 0)), lo_k.shape, per)


# ---------------------------------------------------------------------------- blocks with halos
def _windows(
    pieces: Iterator[tuple[np.ndarray, np.ndarray]],
    block: int,
    halo: int,
    with_x: bool = True,
    buffers: _Buffers | None = None,
) -> Iterator[tuple[int, np.ndarray | None, np.ndarray, int, bool]]:
    """``(g0, x, y, n_valid, last)``: points ``[g0, g0 + block + halo)``, zero-padded.

    Windows step by ``block``; ``last`` is True on the final one. ``with_x=False`` skips copying
    ``x`` (the statistics need only ``y``) and yields ``None`` for it. The windows are aligned
    arrays from ``buffers`` (fresh ones without it).
    """
    buffers = _Buffers() if buffers is None else buffers
    width = block + halo
    it = iter(pieces)
    pend: list[tuple[np.ndarray, np.ndarray]] = []
    done = False

    def pull() -> bool:
        """Append the next non-empty piece to ``pend``; False when the source is exhausted."""
        nonlocal done
        while not done:
            nxt = next(it, None)
            if nxt is None:
                done = True
            elif nxt[1].shape[0]:
                pend.append(nxt)
                return True
        return False

    if not pull():
        return
    xdt, ydt, tail = pend[0][0].dtype, pend[0][1].dtype, pend[0][1].shape[1:]
    carry_x, carry_y = np.empty(0, xdt), np.empty((0,) + tail, ydt)
    g0 = 0
    while True:
        bx = buffers.take((width,), xdt) if with_x else None
        by = buffers.take((width,) + tail, ydt)
        n = carry_y.shape[0]
        if bx is not None:
            bx[:n] = carry_x
        by[:n] = carry_y
        while n < width and (pend or pull()):
            px, py = pend[0]
            if py.shape[1:] != tail:
                raise ValueError(
                    f"stream: every block's y must have channel shape {tail}, got {py.shape[1:]}"
                )
            take = min(width - n, py.shape[0])
            if bx is not None:
                bx[n : n + take] = px[:take]
            by[n : n + take] = py[:take]
            n += take
            if take == py.shape[0]:
                pend.pop(0)
            else:
                pend[0] = (px[take:], py[take:])
        if n == 0:
            buffers.give(bx, by)
            return
        if bx is not None:
            bx[n:] = 0  # the last window's padding, which no range reads
        by[n:] = 0
        last = n <= block and not pend and not pull()
        # the halo, copied: the window itself goes back to the pool once its kernel is done
        carry_x = bx[block:n].copy() if bx is not None else carry_x
        carry_y = by[block:n].copy()
        yield g0, bx, by, n, last
        if last:
            return
        g0 += block


class _End:
    pass


class _Failed:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _prefetch(items: Iterator[Any], depth: int) -> Iterator[Any]:
    """Run ``items`` in a background thread, ``depth`` ahead (double buffering for depth 2)."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(v: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(v, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(_End())
        except BaseException as e:  # noqa: BLE001 - re-raised in the consumer
            put(_Failed(e))

    t = threading.Thread(target=work, name="jaxsubset-prefetch", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if isinstance(item, _End):
                return
            if isinstance(item, _Failed):
                raise item.exc
            yield item
    finally:
        stop.set()
        t.join(timeout=5)


# ---------------------------------------------------------------------------- the kernel
def compute(
    s: Subsets,
    statistics: tuple[str, ...],
    fn: Callable | None,
    batch_size: int | None,
    ddof: int = 0,
    nan_policy: str = "propagate",
):
    """The per-subset results of one call: the named reductions and/or ``fn``'s output."""
    out: dict[str, Any] = {}
    for name in statistics:
        if name in ("var", "std"):
            out[name] = getattr(s, name)(ddof=ddof, nan_policy=nan_policy)
        elif name == "valid":
            out[name] = s.valid_count()
        elif name != "count":  # the true counts come from the ranges, on the host
            out[name] = getattr(s, name)(nan_policy=nan_policy)
    if fn is not None:
        out["result"] = s.apply(fn, batch_size=batch_size, nan_policy=nan_policy)
    return out


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """What a kernel computes per subset: hashable, the static argument of the kernels' jit.

    The compiled kernels live in JAX's own cache (keyed by this spec, the shapes and dtypes),
    so ``jax.clear_caches()`` frees them and, with them, the references to ``fn``.
    """

    capacity: int
    statistics: tuple[str, ...]
    fn: Callable | None
    batch_size: int | None
    ddof: int = 0
    nan_policy: str = "propagate"


def group_size(capacity: int, batch_size: int | None) -> int:
    """Subsets gathered at once in the kernel: about 2**16 values, a slab that stays in cache."""
    if batch_size is not None:
        return batch_size
    return max(1, (1 << 16) // capacity)


def windowed(
    xb: jax.Array,
    yb: jax.Array,
    lstart: jax.Array,
    count: jax.Array,
    g0: jax.Array,
    spec: KernelSpec,
) -> dict[str, Any]:
    """Per-subset results of the ranges ``[lstart, lstart + count)`` of a window of points.

    The same values as ``_gather`` then :func:`compute`, but ``group_size`` subsets at a time
    with ``lax.map``, so the gathered slab stays in cache (several times faster on CPU than
    materialising all ``(R, capacity)`` values). ``len(xb) >= max(lstart) + capacity`` for every
    non-empty range, so ``dynamic_slice`` never clamps a window that holds points.
    """
    capacity = spec.capacity
    group = group_size(capacity, spec.batch_size)
    rows = lstart.shape[0] // group
    idt = lstart.dtype
    offsets = jnp.arange(capacity, dtype=idt)

    def one_group(args: tuple[jax.Array, jax.Array]) -> dict[str, Any]:
        ls, ct = args
        xs = jax.vmap(lambda i: jax.lax.dynamic_slice_in_dim(xb, i, capacity))(ls)
        ys = jax.vmap(lambda i: jax.lax.dynamic_slice_in_dim(yb, i, capacity))(ls)

        def full() -> dict[str, Any]:
            mask = jnp.ones((group, capacity), bool)  # a constant: XLA drops the masking
            s = Subsets(x=xs, y=ys, mask=mask, start=ls + g0, count=ct)
            return compute(s, spec.statistics, spec.fn, None, spec.ddof, spec.nan_policy)

        def masked() -> dict[str, Any]:
            mask = offsets < jnp.minimum(ct, capacity)[:, None]
            s = Subsets(
                x=jnp.where(mask, xs, 0),
                y=jnp.where(mask.reshape(mask.shape + (1,) * (ys.ndim - 2)), ys, 0),
                mask=mask,
                start=ls + g0,
                count=ct,
            )
            return compute(s, spec.statistics, spec.fn, None, spec.ddof, spec.nan_policy)

        return jax.lax.cond(jnp.all(ct == capacity), full, masked)

    out = jax.lax.map(one_group, (lstart.reshape(rows, group), count.reshape(rows, group)))
    return jax.tree_util.tree_map(lambda a: a.reshape((rows * group,) + a.shape[2:]), out)


@functools.partial(jax.jit, static_argnames="spec")
def block_kernel(
    xb: jax.Array,
    yb: jax.Array,
    lstart: jax.Array,
    count: jax.Array,
    g0: jax.Array,
    *,
    spec: KernelSpec,
) -> dict[str, Any]:
    """:func:`windowed` over one block + halo, compiled once per ``spec`` and block shape."""
    return windowed(xb, yb, lstart, count, g0, spec)


def check_compute(statistic: Any, fn: Any, batch_size: Any, func: str):
    """Validate ``statistic`` / ``fn`` / ``batch_size``; return ``(statistics, fn, batch_size)``."""
    if statistic is None and fn is None:
        raise TypeError(f"{func}: pass `statistic` (e.g. 'mean' or ('mean', 'std')) and/or `fn`")
    stats: tuple[str, ...] = ()
    if statistic is not None:
        stats = (statistic,) if isinstance(statistic, str) else tuple(statistic)
        for s in stats:
            if s not in STATISTICS and s not in ("count", "valid"):
                raise ValueError(
                    f"{func}: unknown statistic {s!r}; choose from {', '.join(STATISTICS)}"
                )
    if fn is not None and not callable(fn):
        raise TypeError(f"{func}: `fn` must be callable, got {type(fn).__name__}")
    if batch_size is not None:
        batch_size = static_int(batch_size, "batch_size", func)
    return stats, fn, batch_size


def assemble(parts: list[tuple[np.ndarray, Any]], n_out: int, shape: tuple[int, ...] | None) -> Any:
    """Scatter per-call results ``(index, pytree of (R, ...) arrays)`` into ``(K, ...)`` arrays."""
    if not parts:
        return None
    idx = np.concatenate([p[0] for p in parts])
    shape = (n_out,) if shape is None else shape

    def join(*leaves: Any) -> np.ndarray:
        vals = np.concatenate([np.asarray(v) for v in leaves])
        out = np.zeros((n_out,) + vals.shape[1:], vals.dtype)
        out[idx] = vals
        return out.reshape(shape + vals.shape[1:])

    return jax.tree_util.tree_map(join, *[p[1] for p in parts])


class Progress:
    """One progress line on stderr, redrawn at most 10 times a second."""

    def __init__(self) -> None:
        self.drawn = -math.inf

    def __call__(self, done: int, total: int | None, points: int, end: bool = False) -> None:
        now = time.monotonic()
        if not end and now - self.drawn < 0.1:
            return
        self.drawn = now
        tot = f"/{total}" if total else ""
        sys.stderr.write(f"\rjaxsubset.stream: block {done}{tot}, {points:,} points")
        if end:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _home(entry: tuple[np.ndarray, Any, int]) -> tuple[np.ndarray, Any, int]:
    """A kernel call's results as NumPy arrays, without the padding ranges."""
    idx, out, m = entry
    return idx, jax.tree_util.tree_map(lambda a: np.asarray(a)[:m], out), m


@functools.partial(jax.jit, static_argnames="spec")
def chunk_kernel(
    xb: jax.Array, yb: jax.Array, count: jax.Array, g0: jax.Array, *, spec: KernelSpec
) -> dict[str, Any]:
    """Chunks of ``spec.capacity`` aligned with the block: a reshape instead of a gather."""
    size = spec.capacity
    rows = yb.shape[0] // size
    idt = count.dtype
    xs, ys = xb.reshape(rows, size), yb.reshape((rows, size) + yb.shape[1:])
    start = g0 + jnp.arange(rows, dtype=idt) * size

    def full() -> dict[str, Any]:
        # every chunk full (all blocks but the last): a constant mask, which XLA folds away
        mask = jnp.ones((rows, size), bool)
        s = Subsets(x=xs, y=ys, mask=mask, start=start, count=count)
        return compute(s, spec.statistics, spec.fn, spec.batch_size, spec.ddof, spec.nan_policy)

    def masked() -> dict[str, Any]:
        # slots past the data are the block's zero padding, as _gather's padding
        mask = jnp.arange(size, dtype=idt) < jnp.minimum(count, size)[:, None]
        s = Subsets(x=xs, y=ys, mask=mask, start=start, count=count)
        return compute(s, spec.statistics, spec.fn, spec.batch_size, spec.ddof, spec.nan_policy)

    return jax.lax.cond(jnp.all(count == size), full, masked)


def _run(
    source: _Source,
    pl: _Plan,
    stats: tuple[str, ...],
    fn: Callable | None,
    batch_size: int | None,
    block: int,
    progress: bool,
    prefetch: int,
    ddof: int = 0,
    nan_policy: str = "propagate",
) -> tuple[dict[str, Any], int]:
    """The data pass: every block + halo through one kernel; returns (results, N)."""
    cap = pl.capacity
    regular = pl.aligned is not None
    halo = 0 if regular else cap
    width = block + halo
    if regular:
        per = block // cap
    else:  # a whole number of kernel groups
        group = group_size(cap, batch_size)
        per = -(-pl.per_block // group) * group
    spec = KernelSpec(cap, stats, fn, batch_size, ddof, nan_policy)
    idt = index_dtype()
    total = -(-source.length // block) if source.length else None
    with_x = fn is not None
    x_zeros = None

    draw = Progress() if progress else None
    buffers = _Buffers()
    if isinstance(source, _ArraySource):  # random access: straight into the block buffers
        windows = source.windows(block, halo, with_x, buffers)
    else:
        windows = _windows(source.pieces(), block, halo, with_x, buffers)

    host: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    device: list[tuple[np.ndarray, Any, int]] = []
    held: list[tuple[int, tuple]] = []  # (calls issued up to, host buffers they read)
    done = 0
    big_n = 0
    for b, (g0, bx, by, n, last) in enumerate(_prefetch(windows, prefetch)):
        bufs = (bx, by)
        if bx is None:  # statistics only: x is never read, one zero array serves every block
            if x_zeros is None:  # (its dtype is irrelevant: no statistic reads x)
                x_zeros = jnp.zeros(width, by.dtype)
            bx = x_zeros
        n_end = g0 + n if (n < width or last) else source.length
        start, count, idx = pl.provider.take(math.inf if last else g0 + block, n_end)
        host.append((start, count, idx))
        lstart = start - g0
        mark = len(device)
        g0_arr = np.asarray(g0, idt)  # a NumPy scalar: cheaper to hand to jit than a jnp one
        if start.shape[0] > per:  # several calls read this block: hand it over once
            bx, by = jax.device_put(bx), jax.device_put(by)
        # else the kernel takes the aligned host buffers as they are: on the CPU backend XLA
        # reads them in place (no copy; measured cheaper than an explicit device_put)
        for i in range(0, start.shape[0], per):
            m = min(per, start.shape[0] - i)
            ct = np.zeros(per, idt)
            ct[:m] = count[i : i + m]
            if regular:  # the block's chunks, in order, from its first point
                out = chunk_kernel(bx, by, ct, g0_arr, spec=spec)
            else:
                ls = np.zeros(per, idt)
                ls[:m] = lstart[i : i + m]
                out = block_kernel(bx, by, ls, ct, g0_arr, spec=spec)
            device.append((idx[i : i + m], out, m))
        held.append((len(device), bufs))
        # bring the previous blocks' results home while this block computes (bounded memory);
        # their kernels are then done with their buffers, which the reader may fill again
        while done < mark:
            device[done] = _home(device[done])
            done += 1
        while held and held[0][0] <= done:
            buffers.give(*held.pop(0)[1])
        big_n = g0 + n
        if draw is not None:
            draw(b + 1, total, min(g0 + block, big_n))
    if draw is not None:
        draw(len(host), total, big_n, end=True)
    if not host:
        raise ValueError(f"stream: `source` ({source.name}) holds no points")
    parts = [_home(d)[:2] for d in device]
    start, count, idx = (np.concatenate(a) for a in zip(*host, strict=True))
    n_out = int(np.prod(pl.shape)) if pl.shape is not None else start.shape[0]
    result = {
        "start": assemble([(idx, start)], n_out, pl.shape),
        "count": assemble([(idx, count)], n_out, pl.shape),
    }
    result["overflow"] = result["count"] > cap
    if parts:
        result.update(assemble(parts, n_out, pl.shape))
    return result, big_n


def stream(
    source: Any,
    kind: str,
    *,
    statistic: str | Sequence[str] | None = None,
    fn: Callable[..., Any] | None = None,
    capacity: int | None = None,
    block_size: int = 1 << 20,
    batch_size: int | None = None,
    columns: Sequence[str] = ("x", "y"),
    ddof: int = 0,
    nan_policy: str = "propagate",
    progress: bool = False,
    prefetch: int = 2,
    **kind_args: Any,
) -> dict[str, Any]:
    """Run a subset analysis over data larger than memory, block by block, exactly.

    The points are read in blocks of ``block_size`` plus a halo of ``capacity`` points, so
    subsets crossing block boundaries are exact; all blocks go through ONE compiled kernel (the
    last one padded), and a background thread reads the next block while this one computes.
    Results equal the in-memory path (``jaxsubset.<kind>(x, y, ...)`` then the reductions or
    ``Subsets.apply(fn)``), also for overflowing subsets (their first ``capacity`` points).
    Memory: a few blocks, plus the ``K`` results (and, for ``select``/``bins``/``rolling`` with
    ``at``, their ``K`` ranges).

    The x-value kinds (``select``, ``bins``, ``rolling``) first read ``x`` once to find their
    index ranges, so they need a source that can be read twice (not a one-shot iterator).

    Args:
        source: ``(N, 2)`` ``.npy`` path (memory-mapped), a pair of ``.npy`` paths ``(x, y)``,
            a ``.parquet`` path (read in record batches; pyarrow needed), a pair of arrays
            (memory-mapped or not), or an iterable of ``(x, y)`` NumPy blocks of any sizes (a
            list, or a function returning a fresh iterator, to allow two reads). ``x`` is
            ``(N,)`` sorted; ``y`` is ``(N, *channels)``.
        kind: ``"chunks"`` (``size=`` or ``n=``), ``"sliding"`` (``size=``, ``step=1``),
            ``"rolling"`` (``width=``, ``at=None``, ``closed="right"``), ``"bins"``
            (``edges=``) or ``"select"`` (``lo=``, ``hi=``, ``closed="left"``); the arguments
            mean what they mean for :func:`jaxsubset.chunks` etc. (``n``, ``size``, ``step``
            static ints; ``at=None`` streams one window per point and needs a scalar width).
        statistic: one name or a sequence of names among ``sum mean var std min max median
            argmin argmax`` (the :class:`Subsets` reductions; ``argmin``/``argmax`` are global
            indices); ``count`` is accepted and always returned.
        fn: optional ``fn(x, y, mask)`` run on every subset, as :meth:`Subsets.apply`.
        capacity: static Python int, points held per subset; required for ``rolling``,
            ``bins``, ``select`` (derived for ``chunks``/``sliding``). Wrap the call in
            :func:`jaxsubset.grow_capacity` to find it automatically.
        block_size: static Python int, points per block (the halo comes on top).
        batch_size: for ``fn``: ``lax.map`` batch size (see :meth:`Subsets.apply`).
        columns: the x and y column names of a Parquet file.
        ddof: delta degrees of freedom of ``var`` and ``std``.
        nan_policy: missing readings in ``y``: ``"propagate"``, ``"omit"`` or ``"raise"``, as
            for the :class:`Subsets` reductions (also the mask ``fn`` receives).
        progress: print a progress line to stderr.
        prefetch: blocks read ahead by the background thread (2: double buffering).
        **kind_args: the arguments of ``kind``.

    Returns:
        dict of NumPy arrays with the batch shape ``(K,)`` (or the bounds' / anchors' shape):
        ``"start"``, ``"count"`` (global index and true size of every subset), ``"overflow"``
        (``count > capacity``), one entry per statistic, and ``"result"`` (``fn``'s output
        pytree, stacked).

    Raises:
        ValueError: on unsorted or NaN ``x`` (x-value kinds), bad arguments, or an empty source;
            with ``nan_policy="raise"``, if a subset holds a NaN ``y`` (the plain
            ``ValueError`` of :meth:`Subsets.mean` and the others, naming the count).

    Example:
        >>> import numpy as np, jaxsubset
        >>> x = np.arange(10.0)
        >>> blocks = [(x[:3], x[:3]), (x[3:], x[3:])]
        >>> out = jaxsubset.stream(blocks, "sliding", size=4, step=3, statistic="mean")
        >>> out["start"].tolist(), out["mean"].tolist()
        ([0, 3, 6], [1.5, 4.5, 7.5])
        >>> out = jaxsubset.stream(blocks, "rolling", width=2.5, capacity=4, statistic="sum")
        >>> out["sum"].tolist()
        [0.0, 1.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0, 24.0]
    """
    func = f"stream({kind!r})"
    stats, fn, batch_size = check_compute(statistic, fn, batch_size, func)
    block = static_int(block_size, "block_size", func)
    prefetch = static_int(prefetch, "prefetch", func)
    src = open_source(source, columns=columns, read_size=block, func=func)
    pl = plan(src, kind, kind_args, capacity, block)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    run_stats = stats
    pieces = _by_pieces(pl, kind, stats, fn, nan_policy)
    if pieces is not None:  # sliding windows made of whole pieces: chunks, then combined
        step, run_stats = pieces
        pl = plan(src, "chunks", {"size": step}, None, block)
    if pl.aligned is not None:  # whole chunks per block: no halo, a reshape instead of a gather
        block = max(pl.aligned, block // pl.aligned * pl.aligned)
    with reraise():  # a fired check (nan_policy="raise") arrives as its plain ValueError
        result, big_n = _run(
            src, pl, run_stats, fn, batch_size, block, progress, prefetch, ddof, nan_policy
        )
    size = int(kind_args["size"]) if kind == "sliding" else 0
    if kind == "sliding" and big_n < size:
        raise ValueError(f"{func}: `size` must be <= len(x)={big_n}, got {size}")
    if pieces is not None:
        result = _combine_pieces(result, stats, size, pieces[0], big_n, nan_policy)
    return result


# ---------------------------------------------------------------------------- windows from pieces
_PIECES_STATS = ("count", "sum", "mean", "min", "max", "valid")
_MAX_PIECES = 32  # pieces per window: the host combines them with as many vectorised passes


def _by_pieces(
    pl: _Plan, kind: str, stats: tuple[str, ...], fn: Any, nan_policy: str
) -> tuple[int, tuple[str, ...]] | None:
    """``(step, piece statistics)`` when sliding windows are unions of whole ``step``-pieces.

    With ``size`` a multiple of ``step`` every window is ``size // step`` consecutive pieces,
    all full (sliding windows lie inside the data), and sums, counts, minima and maxima of a
    window follow from its pieces'. The pieces are chunks, which stream as a reshape of each
    block (no halo, no gather: each point is read once instead of ``size / step`` times).
    """
    if kind != "sliding" or fn is not None or nan_policy not in ("propagate", "omit"):
        return None
    if any(s not in _PIECES_STATS for s in stats):
        return None
    step, size = pl.provider.step, pl.provider.size
    if size % step or size // step > _MAX_PIECES:
        return None
    need = []
    if "sum" in stats or "mean" in stats:
        need.append("sum")
    need += [s for s in ("min", "max") if s in stats]
    if "valid" in stats or (nan_policy == "omit" and "mean" in stats):
        need.append("valid")
    return step, tuple(need) or ("sum",)


def _combine_pieces(
    res: dict[str, Any], stats: tuple[str, ...], size: int, step: int, big_n: int, nan_policy: str
) -> dict[str, Any]:
    """Sliding-window results from the results of their pieces (see :func:`_by_pieces`).

    Sums add (in another order than one reduction over the window: ~1 ulp apart), minima and
    maxima are exact (``fmin``/``fmax`` skip the NaN of a piece without readings under "omit",
    as the window reduction would); means divide by the window's count or valid readings.
    """
    r = size // step
    k = (big_n - size) // step + 1
    omit = nan_policy == "omit"

    def windows(a: np.ndarray, op: Any) -> np.ndarray:
        out = np.array(a[:k])
        for j in range(1, r):
            op(out, a[j : j + k], out=out)
        return out

    out: dict[str, Any] = {
        "start": np.arange(k, dtype=res["start"].dtype) * step,
        "count": np.full(k, size, res["count"].dtype),
        "overflow": np.zeros(k, bool),
    }
    # the pieces' sums and valid counts, whichever _by_pieces asked for
    added: dict[str, np.ndarray] = {
        name: windows(res[name], np.add) for name in ("sum", "valid") if name in res
    }
    for name in stats:
        if name in ("sum", "valid"):
            out[name] = added[name]
        elif name == "mean":  # in y's float dtype, as Subsets.mean
            total = added["sum"]
            fdt = total.dtype if total.dtype.kind == "f" else _canon(np.float64)
            num = total.astype(fdt)
            if omit:  # over the real readings; NaN for windows without any
                valid = added["valid"]
                out[name] = num / np.maximum(valid, 1).astype(fdt)
                out[name][valid == 0] = np.nan
            else:
                out[name] = num / np.asarray(size, fdt)
        elif name in ("min", "max"):
            fold = {"min": (np.minimum, np.fmin), "max": (np.maximum, np.fmax)}[name]
            out[name] = windows(res[name], fold[omit])
    return out
