"""Where the points come from: memory-mapped ``.npy`` files, Parquet, arrays, block iterables.

Every source yields ``(x, y)`` NumPy pieces of any size in the dtype JAX holds them in
(:func:`canon`); random-access arrays also copy block windows straight into pooled buffers.
"""

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import jax
import numpy as np

from .._core import check_int_fits
from .buffers import Buffers, Release


def canon(dtype: Any) -> np.dtype:
    """The dtype JAX would give an array of ``dtype`` (float64 -> float32 without x64)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(dtype)))


def position_dtype(dtype: Any) -> np.dtype:
    """The dtype x is resolved in on the host (its keys, bounds, window arithmetic): float64
    as it is, as the in-memory functions resolve positions float32 cannot hold in JAX's
    32-bit mode (``jaxsubset.resolve._exact``), so the streamed ranges stay theirs; any other dtype
    as JAX holds it. The pieces sent to the device are in :func:`canon` dtypes."""
    d = np.dtype(dtype)
    return d if d == np.float64 else canon(d)


def fitted(a: Any, name: str, func: str, dtype: Any = None) -> np.ndarray:
    """``a`` in the dtype JAX holds it in, refusing integers that dtype would wrap (int64 in
    32-bit mode), as the in-memory functions do, instead of streaming the wrapped values."""
    a = np.asarray(a)
    check_int_fits(a, name, func)
    return np.asarray(a, dtype=canon(a.dtype) if dtype is None else dtype)


class Source:
    """Where blocks come from: ``pieces()`` yields ``(x, y)`` NumPy pieces of any size."""

    length: int | None = None
    reiterable: bool = True
    name = "source"

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        raise NotImplementedError

    def x_pieces(self) -> Iterator[np.ndarray]:
        for x, _ in self.pieces():
            yield x


class ArraySource(Source):
    """Random-access arrays: in memory, or memory-mapped ``.npy`` files."""

    length: int

    def __init__(self, x: Any, y: Any, read_size: int, func: str, name: str) -> None:
        self.x, self.y, self.read_size, self.name, self.func = x, y, read_size, name, func
        if x.ndim != 1:
            raise ValueError(f"{func}: `x` must be 1-D, got shape {tuple(x.shape)}")
        if y.ndim < 1 or y.shape[0] != x.shape[0]:
            raise ValueError(
                f"{func}: `x` and `y` must have the same length, got len(x)={x.shape[0]} and "
                f"y.shape={tuple(y.shape)}"
            )
        check_numeric(x.dtype, "x", func)
        check_numeric(y.dtype, "y", func)
        self.length = int(x.shape[0])
        self.xdt, self.ydt = canon(x.dtype), canon(y.dtype)
        self.pdt = position_dtype(x.dtype)  # x's dtype for resolving positions on the host

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        release = Release(self.x, self.y)
        for a in range(0, self.length, self.read_size):
            b = a + self.read_size
            # pieces two back are copied into blocks by now: drop their pages from this process
            release(a - 2 * self.read_size, a - self.read_size)
            yield (
                fitted(self.x[a:b], "x", self.func, self.xdt),
                fitted(self.y[a:b], "y", self.func, self.ydt),
            )

    def x_pieces(self) -> Iterator[np.ndarray]:
        release = Release(self.x)
        for a in range(0, self.length, self.read_size):
            release(a - 2 * self.read_size, a - self.read_size)
            yield fitted(self.x[a : a + self.read_size], "x", self.func, self.pdt)

    def windows(
        self, block: int, halo: int, with_x: bool, buffers: Buffers
    ) -> Iterator[tuple[int, np.ndarray | None, np.ndarray, int, bool]]:
        """What :func:`.buffers.piece_windows` yields, copied from the arrays into pooled buffers.

        One strided copy per point (the ``y`` column of an interleaved ``(N, 2)`` memory map
        lands contiguous in an aligned buffer that XLA then reads without a copy of its own),
        instead of a piece copy, a window copy and a host-to-XLA copy. Rows before the next
        window's start are released from memory maps as soon as they are copied.
        """
        big_n, width = self.length, block + halo
        release = Release(self.x, self.y) if with_x else Release(self.y)
        tail = self.y.shape[1:]
        for g0 in range(0, big_n, block):
            n = min(width, big_n - g0)
            bx = buffers.take((width,), self.xdt) if with_x else None
            by = buffers.take((width,) + tail, self.ydt)
            for dst, src, name in ((bx, self.x, "x"), (by, self.y, "y")):
                if dst is not None:
                    check_int_fits(np.asarray(src[g0 : g0 + n]), name, self.func)
                    np.copyto(dst[:n], src[g0 : g0 + n], casting="unsafe")
                    dst[n:] = 0  # the last window's padding, which no range reads
            release(g0, g0 + block)  # the next window starts at g0 + block
            yield g0, bx, by, n, g0 + block >= big_n


class ParquetSource(Source):
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
        self.func = func
        if len(columns) != 2 or not all(isinstance(c, str) for c in columns):
            raise TypeError(f"{func}: `columns` must be two column names, got {columns!r}")
        self.columns = list(columns)
        meta = pq.ParquetFile(path)
        names = meta.schema_arrow.names
        for c in self.columns:
            if c not in names:
                raise ValueError(f"{func}: column {c!r} not in {path} (columns: {names})")
        self.length = int(meta.metadata.num_rows)

    def _batches(self, cols: list[str], positions: bool = False) -> Iterator[list[np.ndarray]]:
        pf = self.pq.ParquetFile(self.path)
        for batch in pf.iter_batches(batch_size=self.read_size, columns=cols):
            arrays = []
            for c in cols:
                a = batch.column(batch.schema.get_field_index(c)).to_numpy(zero_copy_only=False)
                pdt = position_dtype(a.dtype) if positions else None
                arrays.append(fitted(a, "x" if c == self.columns[0] else "y", self.func, pdt))
            yield arrays

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for cols in self._batches(self.columns):
            yield cols[0], cols[1]

    def x_pieces(self) -> Iterator[np.ndarray]:
        for (x,) in self._batches(self.columns[:1], positions=True):
            yield x


class IterSource(Source):
    """Any iterable of ``(x, y)`` blocks, or a callable returning a fresh one."""

    def __init__(self, source: Any, func: str) -> None:
        self.source, self.func = source, func
        self.reiterable = callable(source) or isinstance(source, Sequence)
        self.used = False
        self.name = "iterable"

    def pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for x, y in self.blocks():
            yield fitted(x, "x", self.func), fitted(y, "y", self.func)

    def x_pieces(self) -> Iterator[np.ndarray]:
        for x, _ in self.blocks():
            yield fitted(x, "x", self.func, position_dtype(x.dtype))

    def blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The ``(x, y)`` blocks as NumPy arrays, checked, in their own dtypes."""
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
            check_numeric(x.dtype, "x", func)
            check_numeric(y.dtype, "y", func)
            yield x, y


def check_numeric(dtype: np.dtype, name: str, func: str) -> None:
    # bfloat16 (an ml_dtypes extension type, NumPy kind "V") is a float like float16
    if np.dtype(dtype).kind not in "biuf" and not jax.numpy.issubdtype(dtype, jax.numpy.floating):
        raise TypeError(f"{func}: `{name}` must be numeric, got dtype {dtype}")


def is_path(v: Any) -> bool:
    return isinstance(v, str | os.PathLike)


def open_npy(path: Any, func: str) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"{func}: cannot memory-map {os.fspath(path)!r} as .npy: {e}") from None


def open_source(source: Any, *, columns: Sequence[str], read_size: int, func: str) -> Source:
    """Turn a user ``source`` into a :class:`Source` (see :func:`stream` for the forms)."""
    if is_path(source):
        path = os.fspath(source)
        if path.endswith((".parquet", ".pq")):
            return ParquetSource(path, columns, read_size, func)
        arr = open_npy(path, func)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise ValueError(
                f"{func}: {path!r} must hold an (N, 2) array of (x, y) columns, got shape "
                f"{arr.shape}; pass a pair of paths for separate x and y files"
            )
        return ArraySource(arr[:, 0], arr[:, 1], read_size, func, path)
    if isinstance(source, tuple | list) and len(source) == 2:
        a, b = source
        if is_path(a) and is_path(b):
            return ArraySource(open_npy(a, func), open_npy(b, func), read_size, func, str(a))
        if isinstance(a, np.ndarray | jax.Array) and isinstance(b, np.ndarray | jax.Array):
            a = a if isinstance(a, np.ndarray) else np.asarray(a)
            b = b if isinstance(b, np.ndarray) else np.asarray(b)
            return ArraySource(a, b, read_size, func, "arrays")
    if callable(source) or isinstance(source, Iterable):
        return IterSource(source, func)
    raise TypeError(
        f"{func}: `source` must be a .npy/.parquet path, a pair of .npy paths, a pair of arrays, "
        f"or an iterable of (x, y) blocks, got {type(source).__name__}"
    )
