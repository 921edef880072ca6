"""Reducing x-width windows: over their resolved ranges, or found and reduced by the kernel.

:func:`over_ranges` is the pure-JAX road (any window, any backend, the derivative).
One window per row with scalar widths (trailing ``width``, centred ``width``, or ``before``/
``after``) goes, on the CPU, to the x-width kernel instead (``csrc/xwidth.cc``): two or three
pointers over sorted ``x`` find each row's window by the resolver's rule and the statistics
are reduced in the same pass; :func:`native_rows` says when, :func:`native_windows` runs it.
"""

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._core import (
    Array,
    bucketing as _bucket,
    check_sorted_x,
    eager,
    index_dtype,
    now_or_traced,
    static_int,
    window_width,
)
from ._native import STATISTICS as NATIVE_STATISTICS, native_xwidth
from ._statistics import finish, median_capacity, range_bound, reduce_ranges
from ._stats import needs_capacity
from .reduce import (
    ORDER,
    Request,
    base_name,
    choose,
    float_dtype,
    padded_fits,
    result_shape,
    road,
)
from .resolve import (
    Ranges,
    guard_width,
    resolve_rolling,
    sides,
    width_operand,
    window_widths,
)


def over_ranges(y: Array, r: Ranges, request: Request, record: bool = True) -> dict[str, Array]:
    """The statistics of x-width windows over their resolved ranges (not bucketed), finished
    for ``min_periods``: ``{statistic: (*batch, *channels)}``; ``record``: the chooser's
    answer is recorded (for :func:`jaxsubset.explain`)."""
    func, stats, method = request.func, request.statistics, request.method
    capacity, min_periods = request.capacity, request.min_periods or 0
    want = tuple(dict.fromkeys((*stats, "count")))
    fdt = float_dtype(y.dtype)
    start, count = jnp.broadcast_arrays(r.start, r.count)
    batch = tuple(count.shape)
    start, count = start.reshape(-1), count.reshape(-1)
    y2 = y.reshape(y.shape[0], int(np.prod(y.shape[1:])))
    cap = None
    if needs_capacity(stats, method, func):
        cap = median_capacity(count, capacity, None, func)
    bound = range_bound(r.max_count, y.shape[0])
    if record:
        padded = choose(
            request.replace(capacity=cap), k=count.size, n=y.shape[0], bound=bound, capacity=cap
        ).padded
    else:  # (the pure-JAX branch of a native call: the same answer, not recorded)
        padded = padded_fits(count.size, y.shape[0], bound, cap)
    asked = request.replace(statistics=want, capacity=cap, bound=bound, padded=padded)
    out = reduce_ranges(y2, start, count, asked)
    ch = tuple(y.shape[1:])
    return {
        s: v.reshape(result_shape(s, batch, ch))
        for s, v in finish(out, count, stats, min_periods, fdt).items()
    }


# x dtypes the x-width kernel resolves windows on (others: the pure-JAX resolver)
NATIVE_X = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


def native_rows(
    x: Array, y: Array, widths: dict[str, Any], request: Request, center: Any = False
) -> bool:
    """Whether x-width windows, one per row, go to the x-width kernel, which resolves them
    itself: scalar widths (``width`` alone, trailing or centred; or ``before``/``after``),
    on x of :data:`NATIVE_X`, in calls whose every statistic takes the native road (eager
    ones: at least one point, in a bucketed program); the order statistics need their
    ``capacity`` (the pure-JAX branch does)."""
    func, stats, method = request.func, request.statistics, request.method
    given = [w for w in widths.values() if w is not None]
    sided = widths["before"] is not None or widths["after"] is not None
    one_kind = (widths["width"] is None) == sided  # `width` or `before`/`after`, not both
    if not isinstance(center, bool) or not one_kind or (center and sided):
        return False  # (the resolver's road raises its message)
    if np.dtype(x.dtype) not in NATIVE_X or not given or any(np.ndim(w) for w in given):
        return False
    if eager(x, y, *given) and not (x.shape[0] and _bucket.bucketed(x, y)):
        return False
    if not all(base_name(s) in NATIVE_STATISTICS for s in stats):
        return False
    if any(base_name(s) in ORDER for s in stats) and request.capacity is None:
        return False  # the resolver's road raises its message on the missing capacity
    return all(road("ranges", s, method, func) == "native" for s in stats)


def row_widths(
    widths: dict[str, Any], center: bool, x: Array, func: str
) -> tuple[dict[str, Any], str]:
    """``(raws, ends)``: the given widths checked as the resolver checks them (concrete: an
    exact NumPy array >= 0; traced: guarded at run time), and how each row's window ends:
    ``"row"`` at the row itself (trailing: ``width`` alone, or an ``after`` of 0, pandas'
    rule for ties), ``"value"`` after every row within ``x[i] + after`` (centred, or a
    nonzero ``after``), ``"either"`` (a traced ``after``: decided at run time)."""
    raws = {
        name: now_or_traced(
            w,
            functools.partial(window_width, name=name, x=x, func=func, time=None),
            functools.partial(guard_width, name=name, func=func),
        )
        for name, w in widths.items()
        if w is not None
    }
    if "width" in raws:
        return raws, "value" if center else "row"
    after = raws.get("after")
    if after is None:
        return raws, "row"
    return raws, now_or_traced(
        after, lambda v: "value" if np.any(v != 0) else "row", lambda _: "either"
    )


def native_windows(
    x: Array, y: Array, widths: dict[str, Any], closed: str, request: Request, center: bool
) -> dict[str, Array]:
    """x-width windows, one per row, by the x-width kernel (:func:`native_rows` said so):
    ``{statistic: (N, *channels)}``, ``min_periods`` finished, as :func:`over_ranges`.

    An eager call checks the widths on the host, pads ``x`` (with its last value: sorted,
    and no present row's window changes) and ``y`` to a bucket size and runs one program per
    bucket, the widths and the length traced; the padding rows are cut."""
    func = request.func
    n, ch = y.shape[0], tuple(y.shape[1:])
    y2 = y.reshape(n, int(np.prod(ch)))
    check_sorted_x(x, func)  # concrete x (eager, closed over): the resolver's message, now
    raws, ends = row_widths(widths, center, x, func)  # concrete: checked now, passed traced
    if not eager(x, y, *raws.values()):  # (a traced width: under jit/vmap, not bucketed)
        out = _xwidth_rows(x, y2, raws, None, closed, request, center, ends)
        return {s: v.reshape(result_shape(s, (n,), ch)) for s, v in out.items()}
    size = _bucket.bucket(n)
    xp = _bucket.pad(x, size, fill=np.asarray(x[-1:])[0])
    yp = _bucket.pad(y2, size)
    ln = np.asarray(n, index_dtype())  # (NumPy: no JAX dispatch for a scalar)
    out = _xwidth_program(xp, yp, raws, ln, closed, request, center, ends)
    return {s: _bucket.unpad(v, n, result_shape(s, (n,), ch)) for s, v in out.items()}


@functools.partial(jax.jit, static_argnames=("closed", "request", "center", "ends"))
def _xwidth_program(
    x: Array,
    y: Array,
    raws: dict[str, Array],
    length: Array,
    closed: str,
    request: Request,
    center: bool,
    ends: str,
) -> dict[str, Array]:
    """An eager call's bucketed program: :func:`_xwidth_rows` of the padded rows."""
    return _xwidth_rows(x, y, raws, length, closed, request, center, ends)


def _xwidth_rows(
    x: Array,
    y2: Array,
    raws: dict[str, Any],
    length: Array | None,
    closed: str,
    request: Request,
    center: bool,
    ends: str,
) -> dict[str, Array]:
    """``{statistic: (N, C)}`` of the windows :func:`row_widths` describes, of ``(N, C)``
    ``y2``, by the kernel (rows from ``length`` on: padding, unspecified).

    The bounds are the resolver's (:func:`jaxsubset.resolve.window_widths`: centred widths
    halved, exactly on integer x): the start ``x > x[i] - before`` (``>=`` for ``closed``
    "left"/"both"), at most the row; a window ending by value ends after ``x <= x[i] +
    after`` (``<`` for "left"/"neither"): the kernel's upper operand is :func:`width_operand`
    of ``after`` with the upper bound's side (its rounding of a fractional width on integer x
    is the lower bound's of the other side). A traced ``after`` takes both calls under a
    ``lax.cond`` on ``after == 0``."""
    func, stats = request.func, request.statistics
    lo_side, hi_side = sides(closed)
    xdt = np.dtype(x.dtype)
    given = (raws.get("width"), raws.get("before"), raws.get("after"))
    before, after, _ = window_widths(*given, center, closed, x, func, None)
    lower = width_operand(before, xdt, lo_side)
    cap = static_int(request.capacity, "capacity", func) if request.capacity is not None else None

    def pure(xx: Array, v: Array, w: dict[str, Any]) -> dict[str, Array]:
        r = resolve_rolling(
            xx, w.get("width"), before=w.get("before"), after=w.get("after"), closed=closed,
            center=center, func=func, checked=True,
        )  # fmt: skip
        return over_ranges(v, r, request, record=False)

    def call(op: Array) -> dict[str, Array]:
        return native_xwidth(
            x, y2, op, raws, stats, omit=request.omit, ddof=request.ddof,
            lo_right=lo_side == "right", hi_right=hi_side == "right",
            min_periods=request.min_periods or 0, fallback=pure, capacity=cap, length=length,
        )  # fmt: skip

    def by_value() -> dict[str, Array]:
        up_side = "left" if hi_side == "right" else "right"
        return call(jnp.concatenate([lower, width_operand(after, xdt, up_side)]))

    if ends == "row":
        res = call(lower)
    elif ends == "value":
        res = by_value()
    else:
        res = jax.lax.cond(jnp.all(jnp.asarray(after) == 0), lambda: call(lower), by_value)
    fdt = float_dtype(y2.dtype)
    return {s: v.astype(fdt) for s, v in res.items()}
