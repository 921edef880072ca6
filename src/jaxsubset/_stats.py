"""Statistics over index ranges: :func:`range_statistic` on the O(N) roads of ``_kernels``."""

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._capacity import _raise_if
from ._kernels import (
    _finish,
    _float_dtype,
    _moments,
    _range_extreme,
)
from ._median import _masked_median
from ._ranges import Ranges
from ._subsets import _gather
from ._typing import Array, ArrayLike
from ._validate import check_nan_policy, index_dtype, is_traced, static_int


STATISTICS = ("count", "sum", "mean", "var", "std", "min", "max", "median")


def _check_statistic(statistic: Any, func: str) -> str:
    if statistic not in STATISTICS:
        raise ValueError(
            f"{func}: `statistic` must be one of {', '.join(map(repr, STATISTICS))}, "
            f"got {statistic!r}"
        )
    return statistic


@functools.partial(jax.jit, static_argnames=("stats", "ddof", "capacity", "skipna"))
def _range_stats(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    ddof: int,
    capacity: int | None,
    skipna: bool = False,
) -> dict[str, Array]:
    """All requested statistics over flat ranges; ``y`` is ``(N, C)``, results ``(K, C)``.

    With ``skipna`` NaN values are left out (pandas' rolling convention) and ``"count"`` counts
    the non-NaN points; otherwise a NaN makes its range's statistic NaN (NumPy's convention).
    """
    idt = index_dtype()
    n_pts = y.shape[0]
    start = jnp.clip(start.astype(idt), 0, n_pts)
    count = jnp.clip(count.astype(idt), 0, n_pts - start)
    stop = start + count
    out_dtype = _float_dtype(y.dtype)
    k, c = start.shape[0], y.shape[1]
    res: dict[str, Array] = {}
    n = jnp.broadcast_to(count[:, None], (k, c))
    need = {s for s in stats if s in ("sum", "mean", "var", "std")}
    ext = tuple(s for s in ("min", "max") if s in stats)
    is_float = jnp.issubdtype(y.dtype, jnp.inexact)

    def general() -> dict[str, Array]:
        out: dict[str, Array] = {}
        nn = n
        if need or (skipna and is_float):
            order = 2 if need & {"var", "std"} else 1
            mom = _moments(y, start, stop, order, skipna)
            if skipna:
                nn = n - mom["nan"].astype(idt)
            nf = nn.astype(mom["s1"].dtype)
            for s in need:
                out[s] = _finish(s, mom, nf, ddof, out_dtype, skipna)
        out["count"] = nn
        yf = y.astype(out_dtype)
        for s in ext:
            src = yf
            if skipna and is_float:
                src = jnp.where(jnp.isnan(yf), jnp.inf if s == "min" else -jnp.inf, yf)
            v = _range_extreme(src, start, stop, s)
            out[s] = jnp.where(nn > 0, v, jnp.nan)
        return out

    res.update(general())
    if "count" not in stats:
        n = res.pop("count")
    else:
        n = res["count"]
    if "median" in stats:
        yf = y.astype(out_dtype)
        sub = _gather(jnp.zeros((n_pts,), out_dtype), yf, start, count, capacity)
        if skipna:
            mask = sub.mask[..., None] & ~jnp.isnan(sub.y)
            med = _masked_median(sub.y, mask)
        else:
            med = sub.median()
        res["median"] = jnp.where((count > capacity)[:, None], jnp.nan, med)
    return res


def _static_capacity(ranges: Ranges, capacity: Any, func: str) -> int:
    if capacity is not None:
        return static_int(capacity, "capacity", func)
    if ranges.max_count is not None:
        return max(int(ranges.max_count), 1)
    if is_traced(ranges.count):
        raise TypeError(
            f"{func}: the median sorts inside padded windows and needs a static `capacity` "
            "under jit for ranges whose size depends on data; compute it outside jit with "
            "jaxsubset.required_capacity(ranges.count) and pass capacity=..."
        )
    cnt = np.asarray(ranges.count)
    big = int(cnt.max()) if cnt.size else 1
    return 1 << (max(big, 1) - 1).bit_length()


def _as_y(y: Any, func: str) -> Array:
    if not is_traced(y):
        np_y = np.asarray(y)
        if np_y.dtype.kind not in "biuf":
            raise TypeError(f"{func}: `y` must be real numeric, got dtype {np_y.dtype}")
        y = jnp.asarray(y)
    elif jnp.issubdtype(y.dtype, jnp.complexfloating):
        raise TypeError(f"{func}: `y` must be real numeric, got dtype {y.dtype}")
    if y.ndim < 1:
        raise ValueError(f"{func}: `y` must have a leading axis of length N, got a scalar")
    return y


def range_statistic(
    y: ArrayLike,
    ranges: Ranges,
    statistic: str | Sequence[str] = "mean",
    *,
    ddof: int = 0,
    capacity: int | None = None,
    nan_policy: str = "propagate",
) -> Array | dict[str, Array]:
    """A statistic of ``y`` over every index range, without padded copies where possible.

    count/sum/mean/var/std come from shifted prefix sums and min/max from a sparse table of
    block extremes (O(N + K) to O(N log N) work, never ``K x capacity``); the median sorts
    inside padded windows of ``capacity`` points. Conventions are those of
    :class:`jaxsubset.Subsets`: an empty range gives NaN (0 for ``"sum"`` and ``"count"``), a
    range holding a NaN gives NaN unless ``nan_policy="omit"``.

    Args:
        y: ``(N, *channels)`` values, in the order of the sorted ``x`` the ranges index.
        ranges: :class:`jaxsubset.Ranges` with batch shape ``(*batch)`` (from
            :mod:`jaxsubset.ranges`); ranges past ``N`` are clipped.
        statistic: one of ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``,
            ``"min"``, ``"max"``, ``"median"``, or a tuple/list of them (computed together,
            sharing the prefix sums).
        ddof: static delta degrees of freedom of ``"var"``/``"std"`` (divisor ``n - ddof``;
            NaN where ``n - ddof <= 0``).
        capacity: static padded length for ``"median"``; default ``ranges.max_count``, or
            (eagerly) the largest count rounded up to a power of two. A range with more points
            than ``capacity`` gives NaN (never a median of a truncated window).
        nan_policy: SciPy's names. ``"propagate"`` (default): a range holding a NaN gives NaN
            (``"count"`` counts every point). ``"omit"``: NaN readings are left out per channel,
            as NumPy's nan-functions (``"count"`` counts the real readings; a range of only NaN
            gives NaN, 0 for ``"sum"``); still O(N), and the gradient is zero at omitted
            readings. ``"raise"``: ValueError if ``y`` holds NaN (at run time under ``jit``).

    Returns:
        ``(*batch, *channels)`` float (``"count"``: int), or a dict of them by statistic name
        when ``statistic`` is a tuple/list.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> r = jaxsubset.ranges.chunks(x, 3)
        >>> jaxsubset.range_statistic(x, r, "mean").tolist()
        [1.5, 5.0, 8.0]
        >>> out = jaxsubset.range_statistic(x, r, ("min", "max", "std"))
        >>> out["min"].tolist(), out["max"].tolist()
        ([0.0, 4.0, 7.0], [3.0, 6.0, 9.0])
    """
    func = "range_statistic"
    if not isinstance(ranges, Ranges):
        raise TypeError(f"{func}: `ranges` must be a jaxsubset.Ranges, got {type(ranges).__name__}")
    single = isinstance(statistic, str)
    if single:
        stats = (_check_statistic(statistic, func),)
    elif isinstance(statistic, tuple | list) and statistic:
        stats = tuple(_check_statistic(s, func) for s in statistic)
    else:
        raise TypeError(
            f"{func}: `statistic` must be a name or a non-empty tuple/list of names, "
            f"got {statistic!r}"
        )
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    y = _as_y(y, func)
    if nan_policy == "raise":
        _raise_on_nan(y, func, "y")
    cap = _static_capacity(ranges, capacity, func) if "median" in stats else None
    batch = ranges.batch_shape
    ch = tuple(y.shape[1:])
    start, count = jnp.broadcast_arrays(ranges.start, ranges.count)
    y2 = y.reshape(y.shape[0], int(np.prod(y.shape[1:])))
    omit = nan_policy == "omit"
    want = tuple(sorted(set(stats)))
    out = _range_stats(y2, start.reshape(-1), count.reshape(-1), want, ddof, cap, omit)
    res = {s: out[s].reshape(batch + ch) for s in stats}
    return res[stats[0]] if single else res


def _raise_on_nan(values: Array, func: str, name: str) -> None:
    """``nan_policy="raise"``: a ValueError if ``values`` hold NaN, eagerly or at run time."""
    values = values if is_traced(values) else jnp.asarray(values)
    if not jnp.issubdtype(values.dtype, jnp.inexact):
        return
    nan = jnp.isnan(values).reshape(-1)
    payload = jnp.stack([jnp.sum(nan), jnp.argmax(nan)]).astype(index_dtype())

    def message(facts: np.ndarray) -> str:
        return (
            f"{func}: `{name}` holds {int(facts[0])} NaN (the first at flat index "
            f"{int(facts[1])}) with nan_policy='raise'; use nan_policy='omit' to skip missing "
            "readings"
        )

    _raise_if(jnp.any(nan), payload, message)
