"""x-width windows (``rolling``): trailing, centred and asymmetric, one per row or at anchors.

One x-width window per point follows pandas' row rule for ties; ``at - width`` and
``at + after`` saturate at the ends of x's dtype.
"""

import functools
from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    ArrayLike,
    argument_guard,
    as_x,
    as_xy,
    bound_array as _bound_array,
    check_closed,
    check_sorted_x,
    concrete_bound as _concrete_bound,
    index_dtype,
    int_limits as _int_limits,
    now_or_traced,
    static_int,
    time_kind,
    traced_array,
    window_width as _window_width,
)
from .._subsets import Subsets, gather_padded
from ._buckets import eager
from ._eager import bucketed
from ._exact import exact_positions, exact_subsets, held_in
from ._index import gather
from ._keys import (
    anchored_lower,
    anchored_upper,
    keys,
    lower_bounds,
    resolve_bound,
    sides,
    upper_bounds,
)
from ._search import GUIDED_EAGER, count_keys
from ._type import Ranges, real_length, to_subsets
from ._xranges import xrange


def rolling_ranges(
    x: ArrayLike,
    width: ArrayLike | None = None,
    *,
    at: ArrayLike | None = None,
    closed: str = "right",
    center: bool = False,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    length: ArrayLike | None = None,
) -> Ranges:
    """Index ranges of x-width windows at each anchor (see :func:`jaxsubset.rolling`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.5, 4.0])
        >>> jaxsubset.ranges.rolling(x, 2.0).start.tolist()
        [0, 0, 0, 3]
        >>> r = jaxsubset.ranges.rolling(x, 2.0, center=True)  # x[i] - 1 < x <= x[i] + 1
        >>> r.start.tolist(), r.count.tolist()
        ([0, 1, 1, 3], [2, 2, 2, 1])
    """
    return resolve_rolling(
        x,
        width,
        at=at,
        closed=closed,
        center=center,
        before=before,
        after=after,
        length=length,
        func="ranges.rolling",
    )


@exact_positions(computes=True, others=("width", "before", "after", "at"))
def resolve_rolling(
    x: ArrayLike,
    width: ArrayLike | None = None,
    *,
    at: ArrayLike | None = None,
    closed: str = "right",
    center: bool = False,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    length: ArrayLike | None = None,
    func: str = "ranges.rolling",
    time: str | None = None,
    guided: bool = True,
    checked: bool = False,
) -> Ranges:
    """:func:`rolling_ranges` with the caller's name (``func``) for messages.

    ``time``: the time kind of the caller's x (before it was converted to nanoseconds).
    ``guided``: one window per row may use the guided search of sorted bounds
    (:func:`sorted_search`); False: the plain one (a smaller program, the same answers).
    ``checked``: the widths were checked on the host before they were traced (the eager
    programs per bucket), so no run-time check is compiled in.
    """
    closed = check_closed(closed, func)
    tk = time or time_kind(x)
    x = as_x(x, func)
    check_sorted_x(x, func)
    if not checked:
        width, before, after = (
            now_or_traced(w, traced=functools.partial(guard_width, name=name, func=func))
            for w, name in ((width, "width"), (before, "before"), (after, "after"))
        )
    if eager(length, x, width, at, before, after) and x.shape[0] > 0:
        r = eager_rolling(x, None, width, at, closed, center, before, after, func, tk)
        if r is not None:
            return r
    n_real = real_length(length, x.shape[0], func)
    lo_side, hi_side = sides(closed)
    before, after, mode = window_widths(width, before, after, center, closed, x, func, tk)
    if mode != "trailing":  # before/after already exact (durations as ns)
        if at is None:
            return rolling_rows(
                x, before, closed, n_real, func, None, after=after, mode=mode, guided=guided
            )
        at = now_or_traced(at, lambda v: _concrete_bound(v, "at", x, func, tk))
        hi = anchored_upper(x, at, after, hi_side, func, None)
        lo = anchored_lower(x, at, before, lo_side, func, None)
        return xrange(x, lo, hi, closed, n_real)
    width = before
    if at is None:
        return rolling_rows(x, width, closed, n_real, func, tk, guided=guided)
    hi = resolve_bound(at, "at", x, func, tk, hi_side)
    lo = anchored_lower(x, at, width, lo_side, func, tk)
    return xrange(x, lo, hi, closed, n_real)


def guard_width(value: Any, name: str, func: str) -> Array:
    """A traced width (``width``, ``before``, ``after``) guarded by a run-time check: >= 0.

    Concrete widths are checked on the host (``must be >= 0``, NaN refused); a traced one
    cannot be, and a negative or NaN width would give each row's own point as its window
    (a window never starts past its row), silently. The check (:func:`error_if`) costs only
    its predicate until it fires and raises the host's message, naming the first bad value.
    """
    w = traced_array(value)
    if not jnp.issubdtype(w.dtype, jnp.number):
        return w  # bools and the like: refused with the host's error further on
    return argument_guard(w, ~(w >= 0), func, name, ">= 0")


def rolling_rows(
    x: Array,
    width: Any,
    closed: str,
    n_real: Array,
    func: str,
    time: str | None,
    *,
    after: Any = None,
    mode: str = "trailing",
    guided: bool = True,
) -> Ranges:
    """One window per row, pandas' rule for ties (``calculate_variable_window_bounds``).

    Trailing windows (``mode="trailing"``, and ``after == 0``): row ``i``'s window ends AT row
    ``i``: at ``i + 1`` for ``closed`` "right"/"both" (later rows tied with it are not in it),
    at the first row tied with it for "left"/"neither" (no row with ``x == x[i]``). Centred
    windows and ``after > 0`` end by value, as pandas' centred windows: at
    ``searchsorted(x, x[i] + after, side)``, so every row tied with ``x[i]`` (and with the
    end) is in or out together. Every window starts at
    ``searchsorted(x, x[i] - width, side)``, at most at ``i`` (pandas: a window never starts
    past its own row) and at most at its end; rows at and past ``length`` are empty.
    """
    lo_side, hi_side = sides(closed)
    idt = index_dtype()
    rows = jnp.arange(x.shape[0], dtype=idt)

    def row_end() -> Array:
        if hi_side == "right":
            return rows + 1
        return count_keys(x, (keys(x), None, None), "left", n_real, sorted_keys=guided)

    if mode == "trailing":
        end = row_end()
    else:
        end = count_keys(x, upper_bounds(x, after, x, hi_side, func), hi_side, n_real, guided)
        # rows whose `after` is 0 end at the row itself (a concrete `after` without 0: none)
        zero = now_or_traced(after, lambda a: bool(np.any(np.asarray(a) == 0)), lambda _: True)
        if mode == "after" and zero:
            end = jnp.where(jnp.asarray(after == 0), row_end(), end)
    end = jnp.minimum(end, n_real)
    lower = lower_bounds(x, width, x, lo_side, func, time)
    start = count_keys(x, lower, lo_side, n_real, sorted_keys=guided)
    start = jnp.minimum(jnp.minimum(start, rows), end)
    count = jnp.where(rows < n_real, end - start, 0)
    return Ranges(start, count)


def window_widths(
    width: Any,
    before: Any,
    after: Any,
    center: Any,
    closed: str,
    x: Array | np.ndarray,
    func: str,
    time: str | None,
) -> tuple[Any, Any, str]:
    """``(before, after, mode)``: the window ``a - before < x <= a + after`` (``closed="right"``).

    ``mode`` is ``"trailing"`` (``width`` alone: ``before=width, after=0``), ``"center"``
    (``before = after = width / 2``) or ``"after"`` (``before``/``after`` given). Centred on
    integer x (time axes included) an odd width is halved exactly: a bound ``a +- w/2`` lies
    between two integers, so each side becomes the integer that keeps the same points
    (``x > a - w/2`` is ``x > a - ceil(w/2)``, ``x >= a - w/2`` is ``x >= a - floor(w/2)``).
    Only ``x``'s dtype is read (``stream`` passes an empty NumPy array of it).
    """
    if not isinstance(center, bool | np.bool_):
        raise TypeError(f"{func}: `center` must be True or False, got {center!r}")
    given = before is not None or after is not None
    if width is not None and given:
        raise ValueError(
            f"{func}: give `width` or `before`/`after`, not both (`width=w` is `before=w, after=0`)"
        )
    if center and given:
        raise ValueError(f"{func}: `center=True` centres `width`; it takes no `before`/`after`")
    if width is None and not given:
        raise TypeError(f"{func}: a window needs `width` (or `before`/`after`)")
    if not center and not given:  # the resolver's trailing path converts and checks it
        return width, None, "trailing"
    if given:
        zero = np.asarray(0)
        b = zero if before is None else _window_width(before, "before", x, func, time)
        f = zero if after is None else _window_width(after, "after", x, func, time)
        return b, f, "after"
    w = _window_width(width, "width", x, func, time)
    lo_side, hi_side = sides(closed)
    if np.dtype(w.dtype).kind in "iuO" and np.dtype(x.dtype).kind in "iu":
        b, f = now_or_traced(
            w,
            lambda v: host_halves(v, lo_side, hi_side),
            lambda v: traced_halves(v, lo_side, hi_side),
        )
        return b, f, "center"
    half = now_or_traced(
        w,
        lambda v: np.asarray(v, np.float64 if v.dtype.kind in "iuO" else v.dtype) / 2,
        lambda v: v / 2,
    )
    return half, half, "center"


def traced_halves(w: Array, lo_side: str, hi_side: str) -> tuple[Array, Array]:
    """:func:`host_halves` of a traced integer width."""
    odd = w & 1
    b = w // 2 + odd if lo_side == "right" else w // 2
    return b, w // 2 + odd if hi_side == "left" else w // 2


def host_halves(w: np.ndarray, lo_side: str, hi_side: str) -> tuple[np.ndarray, np.ndarray]:
    """``(before, after)`` of an integer width on integer x, in Python ints (exact)."""
    wo = w.astype(object)
    b = wo // 2 + (wo % 2) * (lo_side == "right")
    f = wo // 2 + (wo % 2) * (hi_side == "left")
    return np.asarray(b, object), np.asarray(f, object)


@exact_subsets(resolve_rolling, gather, computes=True, others=("width", "before", "after", "at"))
def rolling(
    x: ArrayLike,
    y: ArrayLike,
    width: ArrayLike | None = None,
    *,
    capacity: int,
    at: ArrayLike | None = None,
    closed: str = "right",
    center: bool = False,
    before: ArrayLike | None = None,
    after: ArrayLike | None = None,
    length: ArrayLike | None = None,
) -> Subsets:
    """x-width windows at each point (or at ``at``): pandas offset-window semantics.

    The window anchored at ``a`` holds the points with ``a - before < x <= a + after`` for the
    default ``closed="right"``; ``"left"`` is ``a - before <= x < a + after``, ``"both"``
    ``a - before <= x <= a + after``, ``"neither"`` ``a - before < x < a + after``. ``width``
    alone is ``before=width, after=0`` (``a - width < x <= a``, as
    ``pandas.Series.rolling("5s")``); ``center=True`` is ``before = after = width / 2``, as
    ``pandas.Series.rolling("5s", center=True)`` (on integer x, time axes included, an odd
    width is halved exactly: ``x > a - 2.5`` keeps ``x >= a - 2``). ``a - before`` and
    ``a + after`` saturate at the ends of x's dtype (exact integer arithmetic on integer and
    time axes, never a wrap).

    One window per point (``at=None``) follows pandas' rules for tied x: a trailing window
    (``after`` 0) ends AT its own row (later rows tied with it are not in it); a centred
    window or one with ``after > 0`` ends by value (every row tied with ``x[i] + after`` is in
    or out together, as pandas' centred windows), and every window starts at most at its own
    row. With ``at``, every window is exactly the interval above.

    Args:
        x: ``(N,)`` sorted sample positions.
        y: ``(N, *channels)`` values.
        width: scalar or array broadcastable against the anchors, window width in x units
            (>= 0; traced is fine: a negative or NaN traced width, ``before`` or ``after``
            raises at run time, see :func:`jaxsubset.checked`); on a datetime64 axis a
            duration (``"7D"``, ``timedelta64``).
        capacity: static Python int, the padded length of every window.
        at: ``(*batch)`` anchor positions; default ``x`` itself (one window per point).
        closed: which ends are included (see above).
        center: static bool, centre ``width`` on the anchor (pandas' ``center=True``).
        before: instead of ``width``: the extent below the anchor (>= 0, traced is fine;
            default 0 when ``after`` is given).
        after: the extent above the anchor (>= 0, traced is fine; default 0).
        length: optional traced number of real points (see :func:`jaxsubset.pack`).

    Returns:
        :class:`Subsets` with the anchors' batch shape (``(N,)`` by default).

    Raises:
        ValueError: if concrete ``x`` is unsorted or holds NaN (see :func:`select`).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 1.5, 4.0])
        >>> jaxsubset.rolling(x, x, 2.0, capacity=4).count.tolist()
        [1, 2, 3, 1]
        >>> jaxsubset.rolling(x, x, before=1.0, after=0.5, capacity=4).count.tolist()
        [1, 2, 2, 1]
    """
    capacity = static_int(capacity, "capacity", "rolling")
    tk = time_kind(x)
    x, y = as_xy(x, y, "rolling")
    if eager(length, x, y, width, at, before, after) and x.shape[0] > 0:
        closed = check_closed(closed, "rolling")
        check_sorted_x(x, "rolling")
        s = eager_rolling(
            x, y, width, at, closed, center, before, after, "rolling", tk, capacity=capacity
        )
        if s is not None:
            return s
    r = resolve_rolling(
        x,
        width,
        at=at,
        closed=closed,
        center=center,
        before=before,
        after=after,
        length=length,
        func="rolling",
        time=tk,
    )
    return to_subsets(x, y, r, capacity)


def rolling_args(
    x: Array,
    width: Any,
    at: Any,
    center: Any,
    before: Any,
    after: Any,
    func: str,
    tk: str | None,
) -> tuple[dict[str, Any], dict[str, Any], Any, int | None] | None:
    """Concrete window arguments converted for :func:`eager_windows`, or None where not
    bucketed: ``(arrays, scalars, at, keep)``, the array widths and the anchors broadcast to
    the windows' batch shape (``(N,)`` without anchors; the eager decorator pads them), the
    scalar widths, and ``keep``: ``N`` where nothing is per window (a window per row of the
    padded ``x``, the first ``N`` real), else None.

    Scalar widths are converted as :func:`jaxsubset.rolling_statistic` converts them. Not
    bucketed: an empty batch, a ``center`` that is not a bool, or widths that do not
    broadcast so (the unbucketed call raises, or broadcasts further).
    """
    widths: dict[str, Any] = {"width": width, "before": before, "after": after}
    if not isinstance(center, bool | np.bool_):
        return None
    xdt = np.dtype(x.dtype)
    arrays = []
    for name, w in widths.items():
        if w is not None:
            _window_width(w, name, x, func, tk)  # the resolver's own checks (>= 0, durations)
            if not traced_exactly(_concrete_bound(w, name, x, func, tk, width=True), xdt):
                return None
            widths[name] = _bound_array(w, name, x, func, tk, width=True)
            if np.ndim(widths[name]) != 0:
                arrays.append(name)
    n = x.shape[0]
    batch: tuple[int, ...] = (n,)
    if at is not None:
        at_h = _concrete_bound(at, "at", x, func, tk)
        if not traced_exactly(at_h, xdt) or not held_in(at_h, xdt):  # exact on the host
            return None
        at = _bound_array(at, "at", x, func, tk)
        batch = tuple(at.shape)
    try:
        batch = np.broadcast_shapes(batch, *(np.shape(widths[k]) for k in arrays))
    except ValueError:
        return None
    if (at is None and batch != (n,)) or 0 in batch:
        return None
    per = {k: np.broadcast_to(np.asarray(widths.pop(k)), batch) for k in arrays}
    if at is not None:
        at = np.broadcast_to(np.asarray(at), batch)
    return per, widths, at, n if at is None and not per else None


def traced_exactly(v: np.ndarray, xdt: np.dtype) -> bool:
    """Whether a concrete integer width or anchor keeps its meaning when the resolver sees it
    traced: it fits x's integer dtype (a traced width is clipped to it; the host resolver
    saturates wider ones exactly) or, on float x, float's exact integers; Python ints
    beyond int64 stay on the host."""
    if v.dtype == object:
        return False
    if v.dtype.kind not in "iu" or v.size == 0:
        return True
    if xdt.kind in "iu":
        lo, hi = _int_limits(xdt)
    else:
        hi = 2 ** (np.finfo(xdt).nmant + 1)
        lo = -hi
    return lo <= int(v.min()) and int(v.max()) <= hi


def eager_rolling(
    x: Array,
    y: Array | None,
    width: Any,
    at: Any,
    closed: str,
    center: Any,
    before: Any,
    after: Any,
    func: str,
    tk: str | None,
    **gather: int,
) -> Any:
    """An eager :func:`rolling` (``y`` and a ``capacity`` in ``gather``) or its ranges
    (:func:`resolve_rolling`: no ``y``, no ``capacity`` keyword at all, so the bucket's
    program is the one :func:`bucketed_ranges` calls) in one program per bucket, or None
    where it is not bucketed (see :func:`rolling_args`). ``closed`` and ``x`` checked."""
    args = rolling_args(x, width, at, center, before, after, func, tk)
    if args is None:
        return None
    arrays, scalars, at, keep = args
    return eager_windows(
        x, y, (arrays, at), scalars, closed=closed, center=bool(center), func=func,
        keep=keep, **gather,
    )  # fmt: skip


def bucketed_ranges(
    x: Array, widths: dict, at: Any, closed: str, center: bool, func: str
) -> Ranges:
    """The eager windows as one jitted resolver program per bucket of shapes (host results).

    ``widths`` and ``at`` already converted (:func:`rolling_args` or
    :func:`jaxsubset.rolling_statistic`). ``x`` is padded with its last value to
    ``bucket(N)`` (still sorted) and resolved with ``length=N``, so no padding point is
    inside a window; anchors are padded to ``bucket(K)``. ``x`` is checked here, as the
    resolver does eagerly.
    """
    check_sorted_x(x, func)
    if at is not None and np.size(at) == 0:
        return resolve_rolling(x, **widths, at=at, closed=closed, center=center, func=func)
    keep = x.shape[0] if at is None else None
    return eager_windows(
        x, None, ({}, at), widths, closed=closed, center=center, func=func, keep=keep
    )


@bucketed(static_argnames=("closed", "center", "func", "capacity"))
def eager_windows(
    x: Array,
    y: Array | None,
    per_window: tuple[dict, Any],
    n: Array,
    widths: dict,
    *,
    closed: str,
    center: bool,
    func: str,
    capacity: int | None = None,
) -> Subsets | tuple[Array, Array]:
    """Eager x-width windows: ``per_window`` (the array widths, the anchors) padded to a
    bucket, ``widths`` the scalar ones (see :func:`rolling_args`); their Subsets with a
    ``capacity``, else their ranges. The ranges alone use the guided search of sorted
    bounds only where its run time pays for its compile time in an eager call (the plain
    search gives the same answers)."""
    arrays, at = per_window
    guided = capacity is not None or x.shape[0] >= GUIDED_EAGER
    r = resolve_rolling(
        x, **widths, **arrays, at=at, closed=closed, center=center, length=n, func=func,
        guided=guided, checked=True,
    )  # fmt: skip
    start, count = (a.reshape(-1) for a in jnp.broadcast_arrays(r.start, r.count))
    if capacity is None:
        return start, count
    assert y is not None  # for mypy: a gather has values
    return gather_padded(x, y, start, count, capacity, length=n)
