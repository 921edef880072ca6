"""Bins with ``numpy.histogram``'s edges (half-open, the last closed), and calendar periods."""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    ArrayLike,
    as_x,
    as_xy,
    check_sorted_x,
    concrete_bound as _concrete_bound,
    concrete_only,
    index_dtype,
    now_or_traced,
    period_edges,
    static_int,
    time_kind,
    traced_array,
    x_to_ns,
)
from .._subsets import Subsets, gather_padded
from ._buckets import eager
from ._eager import bucketed
from ._exact import exact_positions, exact_subsets
from ._index import gather
from ._keys import Key, resolve_bound
from ._search import count_keys
from ._type import Ranges, real_length, to_subsets


def check_edges(edges: ArrayLike, func: str, x: Array | None = None) -> Array:
    """Validate bin edges: 1-D, at least two, non-decreasing and NaN-free when concrete."""
    # concrete edges checked on the host: jnp.asarray would compile a program per shape
    arr: Any = now_or_traced(
        edges,
        lambda e: host_edges(np.asarray(e), func),
        lambda e: edges_shape(traced_array(e), func),
    )
    if x is not None:
        arr = arr.astype(jnp.promote_types(x.dtype, arr.dtype))
    # concrete edges stay on the host (the callers resolve them exactly): a device_put would
    # cast float64 edges to float32 in 32-bit mode, warning of overflow for 1e300
    return arr


def edges_shape(arr: Any, func: str) -> Any:
    """``arr`` when it is 1-D with at least two edges, else the error."""
    if arr.ndim != 1 or arr.shape[0] < 2:
        raise ValueError(
            f"{func}: `edges` must be a 1-D array of at least 2 edges, got shape {tuple(arr.shape)}"
        )
    return arr


def host_edges(np_e: np.ndarray, func: str) -> np.ndarray:
    """Concrete edges checked on the host: shape, numeric, no NaN, non-decreasing."""
    edges_shape(np_e, func)
    # object: Python ints beyond int64 (exact bounds), compared as Python ints
    ints = np_e.dtype == object and all(
        isinstance(v, int | np.integer) for v in np_e.ravel().tolist()
    )
    if np_e.dtype.kind not in "biuf" and not ints:
        raise TypeError(f"{func}: `edges` must be numeric, got dtype {np_e.dtype}")
    if np_e.dtype.kind == "f" and np.isnan(np_e).any():
        raise ValueError(f"{func}: `edges` holds NaN")
    bad = np_e[1:] < np_e[:-1]
    if bad.any():
        i = int(np.argmax(bad))
        a, b = np_e[i : i + 2].tolist()  # Python numbers (also from object edges)
        raise ValueError(
            f"{func}: `edges` must increase monotonically, but edges[{i}]={a!r} > "
            f"edges[{i + 1}]={b!r}"
        )
    return np_e


def period_bin_edges(x: Any, period: str, length: Any, tk: str | None, func: str) -> np.ndarray:
    """The edges of a period (``"1M"``, ``"7D"``) over concrete dates ``x`` (int64 ns), as
    ``datetime64[ns]``: :func:`jaxsubset.bin_edges` over the real points."""
    if tk != "M":
        concrete_only(
            x,
            f"{func}: `edges`={period!r} is a period, whose edges are computed on the host "
            "from concrete dates, but `x` is traced (inside jit/vmap): compute them outside "
            f"first, `edges = jaxsubset.to_ns(jaxsubset.bin_edges(dates, {period!r}))`",
        )
        raise TypeError(
            f"{func}: `edges`={period!r} is a string, but `x` is not a time axis: periods such "
            "as '1M', '1Y', '7D' need numpy.datetime64 x"
        )
    concrete_only(length, f"{func}: a period's edges need a concrete `length`, got a traced one")
    # dates, or int64 ns already (``bins`` converts x before it asks for the ranges)
    xc = x_to_ns(x, func) if time_kind(x) == "M" else np.asarray(x)
    if length is not None:
        xc = xc[: int(np.asarray(length))]
    if xc.size == 0:
        raise ValueError(f"{func}: `x` is empty; a period's bins need at least one date")
    ns = period_edges(int(xc[0]), int(xc[-1]), period, f"{func}: `edges`={period!r}")
    return ns.view("datetime64[ns]")


def bin_ranges(
    x: ArrayLike,
    edges: ArrayLike,
    *,
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges of ``numpy.histogram`` bins (see :func:`jaxsubset.bins`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.0, 2.0, 3.0])
        >>> jaxsubset.ranges.bins(x, jnp.array([0.0, 1.0, 3.0])).count.tolist()
        [1, 4]
    """
    return resolve_bins(x, edges, length=length, func="ranges.bins")


@exact_positions(others=("edges",))
def resolve_bins(
    x: ArrayLike,
    edges: ArrayLike,
    *,
    length: ArrayLike | None = None,
    func: str = "ranges.bins",
    time: str | None = None,
) -> Ranges:
    """:func:`bin_ranges` with the caller's name (``func``) for messages."""
    tk = time or time_kind(x)
    if isinstance(edges, str):
        edges = period_bin_edges(x, edges, length, tk, func)
    x = as_x(x, func)
    check_sorted_x(x, func)
    e: Any  # the concrete edges (exact, on the host) or the traced ones
    e = now_or_traced(edges, lambda v: _concrete_bound(v, "edges", x, func, tk), traced_array)
    check_edges(e, func)
    if eager(length, x, e) and x.shape[0] > 0:
        lk, lst, nb = edge_keys(np.asarray(e), x, func)
        return eager_bin_ranges(x, None, lk, lst, nb, keep=int(e.shape[0]) - 1)
    n_real = real_length(length, x.shape[0], func)
    # edge e_i opens bin i (x >= e_i) and closes bin i - 1 (x < e_i); the last edge closes the
    # last bin inclusively (x <= e_B), as numpy.histogram and scipy's binned_statistic
    below_edge = count_keys(x, resolve_bound(e, "edges", x, func, None, "left"), "left", n_real)
    last = count_keys(x, resolve_bound(e[-1:], "edges", x, func, None, "right"), "right", n_real)
    left = below_edge[:-1]
    right = jnp.concatenate([below_edge[1:-1], last])
    return Ranges(left, jnp.maximum(right - left, 0))


@exact_subsets(resolve_bins, gather, others=("edges",))
def bins(
    x: ArrayLike,
    y: ArrayLike,
    edges: ArrayLike,
    *,
    capacity: int,
    length: ArrayLike | None = None,
) -> Subsets:
    """One subset per bin, with ``numpy.histogram`` edges: ``[e_i, e_{i+1})``, the last closed.

    Args:
        x: ``(N,)`` sorted sample positions.
        y: ``(N, *channels)`` values.
        edges: ``(B + 1,)`` non-decreasing bin edges (values may be traced; B is static),
            or on a time axis a period (``"1M"``, ``"1Q"``, ``"1Y"``, ``"7D"``, ``"12h"``):
            pandas ``resample``'s bins, the edges of :func:`jaxsubset.bin_edges` computed
            on the host from concrete dates.
        capacity: static Python int, the padded length of every bin.
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with batch shape ``(B,)``.

    Raises:
        ValueError: if concrete ``x`` is unsorted or holds NaN, or concrete ``edges`` decrease.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.0, 2.0, 3.0])
        >>> jaxsubset.bins(x, x, jnp.array([0.0, 1.0, 3.0]), capacity=4).count.tolist()
        [1, 4]
    """
    capacity = static_int(capacity, "capacity", "bins")
    tk = time_kind(x)
    x, y = as_xy(x, y, "bins")
    if eager(length, x, y, edges) and x.shape[0] > 0:
        return bucketed_bins(x, y, edges, capacity, tk)
    r = resolve_bins(x, edges, length=length, func="bins", time=tk)
    return to_subsets(x, y, r, capacity)


def bucketed_bins(x: Array, y: Array, edges: Any, capacity: int, tk: str | None) -> Subsets:
    """Eager :func:`bins`: N and the number of bins padded (edges repeat the last one)."""
    func = "bins"
    check_sorted_x(x, func)
    if isinstance(edges, str):  # a period ("1M", "7D"): its edges from the concrete dates
        edges = period_bin_edges(x, edges, None, tk, func)
    raw = _concrete_bound(edges, "edges", x, func, tk)
    check_edges(raw, func)
    left, last, nb = edge_keys(raw, x, func)
    return eager_bins(x, y, left, last, nb, capacity=capacity, keep=raw.shape[0] - 1)


def edge_keys(raw: np.ndarray, x: Array, func: str) -> tuple[Key, Key, Array]:
    """Concrete edges (already converted and checked) as keys: ``(left, last, nbins)``, the
    opening key of every edge, the closing key of the last, the number of bins (traced in
    the eager programs: one program for the numbers of bins of a bucket)."""
    left = resolve_bound(raw, "edges", x, func, None, "left")
    last = resolve_bound(raw[-1:], "edges", x, func, None, "right")
    return left, last, jax.device_put(np.asarray(raw.shape[0] - 1, index_dtype()))


def padded_bin_ranges(
    x: Array, left: Key, last: Key, nbins: Array, n: Array
) -> tuple[Array, Array]:
    """:func:`bin_ranges` of the edges' keys ``left``, which may be padded past the ``nbins``
    real bins (the ranges there are cut off); the last real bin closes at ``last``."""
    below_edge = count_keys(x, left, "left", n)
    closing = count_keys(x, last, "right", n)
    start = below_edge[:-1]
    bin_no = jnp.arange(start.shape[0], dtype=start.dtype)
    stop = jnp.where(bin_no == nbins - 1, closing, below_edge[1:])
    return start, jnp.maximum(stop - start, 0)


@bucketed()
def eager_bin_ranges(
    x: Array, y: None, left: Key, n: Array, last: Key, nbins: Array
) -> tuple[Array, Array]:
    """Eager :func:`bin_ranges`: the edges (one row per edge) padded to a bucket."""
    return padded_bin_ranges(x, left, last, nbins, n)


@bucketed(static_argnames=("capacity",))
def eager_bins(
    x: Array, y: Array, left: Key, n: Array, last: Key, nbins: Array, *, capacity: int
) -> Subsets:
    """Eager :func:`bins`: :func:`padded_bin_ranges` and the gather."""
    start, count = padded_bin_ranges(x, left, last, nbins, n)
    return gather_padded(x, y, start, count, capacity, length=n)
