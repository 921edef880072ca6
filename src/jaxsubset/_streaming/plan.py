"""Planning: every streamed subset as a global index range, found with the resolver's rules.

Chunks and sliding windows get their ranges by arithmetic (:class:`Regular`); x-ranges, bins,
x-width windows at explicit anchors and dynamic (hopping/tumbling) windows by counting, in one
x-only pass, how many points lie below each bound (``searchsorted`` piece by piece, a pointer
sweep over sorted bounds: :class:`Sweep`). Rolling
windows anchored at every point use x cursors instead (:class:`Counter`: lagging ones for the
starts, a leading one for the ends of windows reaching past their anchor), so no bound array
of length N is built. Bounds are checked and turned into order-preserving keys by
:mod:`jaxsubset.resolve`' host functions, so the streamed ranges equal the in-memory ones.
"""

import math
from collections.abc import Callable, Iterator
from typing import Any, Literal

import numpy as np

from .._core import (
    check_closed,
    check_int_fits,
    concrete_bound as _concrete_bound,
    nan_in_x,
    next_power_of_two,
    static_int,
    unsorted_x,
)
from ..resolve import (
    check_edges,
    host_anchored_lower,
    host_anchored_upper,
    host_key,
    host_lower,
    host_upper,
    host_windows,
    keys,
    sides,
    window_widths,
)
from .sources import ArraySource, Source, position_dtype


KINDS = ("chunks", "sliding", "rolling", "dynamic", "bins", "select")


KIND_ARGS = {
    "chunks": {"n", "size"},
    "sliding": {"size", "step"},
    "rolling": {"width", "at", "closed", "center", "before", "after"},
    "dynamic": {"every", "period", "offset", "closed"},
    "bins": {"edges"},
    "select": {"lo", "hi", "closed"},
}


Side = Literal["left", "right"]  # of searchsorted


GATHER_BUDGET = 1 << 21  # ranges per kernel call * capacity: bounds the gathered slab


def as_side(side: str) -> Side:
    """``side`` as ``searchsorted``'s literal."""
    if side == "left":
        return "left"
    if side == "right":
        return "right"
    raise ValueError(f"`side` must be 'left' or 'right', got {side!r}")


def other_side(side: str) -> Side:
    """The other side: bounds up to a piece's last point are resolved inside the piece."""
    return "right" if side == "left" else "left"


def checked_x(pieces: Iterator[np.ndarray], func: str) -> Iterator[np.ndarray]:
    """Pass x pieces through, raising if x holds NaN or is not sorted across the stream."""
    prev = None
    g = 0
    for xp in pieces:
        if xp.dtype.kind == "f":
            nan = np.isnan(xp)
            if nan.any():
                raise nan_in_x(func, g + int(np.argmax(nan)))
        if xp.size:
            if prev is not None and xp[0] < prev:
                raise unsorted_x(func, g - 1, prev, xp[0].item())
            bad = xp[1:] < xp[:-1]
            if bad.any():
                i = int(np.argmax(bad))
                raise unsorted_x(func, g + i, xp[i].item(), xp[i + 1].item())
            prev = xp[-1].item()
        g += xp.size
        yield xp


class Counter:
    """``C(v) = #{x < v}`` (side "left") or ``#{x <= v}`` (side "right") over x pieces.

    Bounds must arrive non-decreasing; pieces are consumed lazily from an own x iterator, so
    several counters can lag behind one another over the same source (bounded memory).
    """

    def __init__(self, pieces: Iterator[np.ndarray], side: str) -> None:
        self.it, self.side, self.other = pieces, as_side(side), other_side(side)
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

    def total(self) -> int:
        """The number of points: the rest of the pieces read (later bounds resolve to it)."""
        if self.cur is not None:
            self.g0 += self.cur.size
            self.cur = None
        for piece in self.it:
            self.g0 += piece.size
        self.done = True
        return self.g0


class Sweep:
    """``C(v)`` for a fixed set of bounds (any order), fed the x pieces in order."""

    def __init__(self, bounds: np.ndarray, side: str) -> None:
        flat = np.ravel(bounds)
        self.order = np.argsort(flat, kind="stable")
        self.v = flat[self.order]
        self.side, self.other = as_side(side), other_side(side)
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


def count_bounds(
    source: Source, jobs: list[tuple[np.ndarray, str]], func: str
) -> tuple[list[np.ndarray], int]:
    """``C(bounds, side)`` for several bound arrays (any order) in ONE x pass; also N."""
    sweeps = [Sweep(b, side) for b, side in jobs]
    n = 0
    for xp in checked_x(source.x_pieces(), func):
        xk = x_keys(xp, func)
        for sw in sweeps:
            sw.feed(n, xk)
        n += xp.size
    return [sw.finish(n, np.shape(b)) for sw, (b, _) in zip(sweeps, jobs, strict=True)], n


class Regular:
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


class Sorted:
    """Ranges from an iterator of ``(start, count, index)`` chunks, starts non-decreasing.

    ``most()`` is the largest count of all the ranges (from the known counts, or a fresh pass
    over x), read before any range is taken: what ``capacity="auto"`` holds.
    """

    def __init__(
        self,
        chunks: Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]],
        most: Callable[[], int],
    ) -> None:
        self.chunks, self.most = chunks, most
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


def sorted_once(start: np.ndarray, count: np.ndarray) -> Sorted:
    start, count = np.ravel(start).astype(np.int64), np.ravel(count).astype(np.int64)
    order = np.argsort(start, kind="stable")
    chunks = iter([(start[order], count[order], order.astype(np.int64))])
    return Sorted(chunks, lambda: int(count.max(initial=0)))


def rolling_sorted(source: Source, *args: Any, **kwargs: Any) -> Sorted:
    """:func:`rolling_chunks` as ranges; ``most()`` runs a second cursor pass over x."""

    def most() -> int:
        chunks = rolling_chunks(source, *args, **kwargs)
        return max((int(c.max(initial=0)) for _, c, _ in chunks), default=0)

    return Sorted(rolling_chunks(source, *args, **kwargs), most)


def x_keys(xp: np.ndarray, func: str) -> np.ndarray:
    """An x piece in the dtype JAX holds it in, as the resolver's order-preserving keys.

    Bounds are resolved with ``jaxsubset.resolve``' rules (``host_key``), so the streamed
    ranges equal the in-memory ones: exact integer comparisons, directed rounding of bounds x's
    dtype cannot hold, -0.0 equal to 0.0.
    """
    check_int_fits(xp, "x", func)
    return keys(np.asarray(xp, dtype=position_dtype(xp.dtype)), np)


def key_pieces(pieces: Iterator[np.ndarray], func: str) -> Iterator[np.ndarray]:
    for xp in pieces:
        yield x_keys(xp, func)


def rolling_chunks(
    source: Source,
    width: np.ndarray,
    xdt: np.dtype,
    closed: str,
    func: str,
    after: np.ndarray | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Windows anchored at every point, pandas' row rule for ties (as ``ranges.rolling``).

    Trailing windows (``after`` None): row ``i``'s window ends at ``i + 1`` ("right"/"both")
    or at the first row tied with it ("left"/"neither"). Windows reaching ``after`` past their
    anchor (centred ones, ``after > 0``) end by value, at ``#{x <= x[i] + after}`` (or ``<``).
    Every window starts at ``#{x < x[i] - width}`` (or ``<=``), at most at ``i``. Cursors over
    the keys of x find the starts (lagging) and the ends (leading, for windows that end by
    value: they read x ahead of the pass), so no bound array of length N is built.
    """
    lo_side, hi_side = sides(closed)
    lo_c = Counter(key_pieces(source.x_pieces(), func), lo_side)
    ahead = after is not None
    hi_c = None
    if ahead or hi_side == "left":
        hi_c = Counter(key_pieces(source.x_pieces(), func), hi_side if ahead else "left")
    g = 0
    for xp in checked_x(source.x_pieces(), func):
        a = np.asarray(xp, dtype=xdt)
        rows = np.arange(g, g + xp.size, dtype=np.int64)
        key, below = host_lower(a, width, xdt, lo_side)
        start = lo_c.resolve(key)
        if below is not None:
            start = np.where(below, 0, start)
        if hi_c is None:
            stop = rows + 1
        elif after is not None:
            hkey, above = host_upper(a, after, xdt, hi_side)
            stop = hi_c.resolve(hkey)
            if above is not None and above.any():  # past x's dtype: every point is below
                stop = np.where(above, hi_c.total(), stop)
        else:
            stop = hi_c.resolve(keys(a, np))
        start = np.minimum(np.minimum(start, rows), stop)
        yield start, stop - start, rows
        g += xp.size


def flagged(count: np.ndarray, bound: tuple[Any, Any, Any], n: int) -> np.ndarray:
    """Counts of keyed bounds with the resolver's flags: below every x 0, above every x N."""
    _, below, above = bound
    if above is not None:
        count = np.where(np.broadcast_to(above, count.shape), n, count)
    if below is not None:
        count = np.where(np.broadcast_to(below, count.shape), 0, count)
    return count


def concrete(value: Any, name: str, func: str, width: bool = False) -> np.ndarray:
    """A bound (or width) checked and converted by the resolver's own host function.

    Streamed x is numeric (never a time axis), so dates are refused as they are in memory; the
    messages are the in-memory path's. (``_concrete_bound`` does not read its ``x``.)
    """
    return _concrete_bound(value, name, None, func, None, width)


def key_bounds(
    value: Any, name: str, xdt: np.dtype, func: str, side: str
) -> tuple[np.ndarray, Any, Any]:
    """A bound as the resolver's ``(key, below, above)`` in x's key space for ``side``."""
    return host_key(concrete(value, name, func), xdt, side)


def x_dtype(source: Source) -> np.dtype:
    if isinstance(source, ArraySource):
        return source.pdt
    for xp in source.x_pieces():
        return xp.dtype
    return position_dtype(np.float64)


class Plan:
    """What to compute: capacity ``L``, a range provider, the batch shape of the result."""

    def __init__(self, capacity: int, provider: Any, shape: tuple[int, ...] | None, per: int):
        self.capacity, self.provider, self.shape, self.per_block = capacity, provider, shape, per
        self.aligned: int | None = None  # chunk size when blocks hold whole chunks (fast path)


def plan(
    source: Source,
    kind: str,
    kind_args: dict[str, Any],
    capacity: int | str | None,
    block: int,
    name: str = "stream",
) -> Plan:
    """Ranges for ``kind`` over a stream (an x pass for the x-value kinds)."""
    func = f"{name}({kind!r})"
    if kind not in KINDS:
        raise ValueError(
            f"{name}: `kind` must be one of {', '.join(map(repr, KINDS))}, got {kind!r}"
        )
    extra = set(kind_args) - KIND_ARGS[kind]
    if extra:
        raise TypeError(
            f"{func}: unexpected argument(s) {sorted(extra)}; {kind} takes "
            f"{sorted(KIND_ARGS[kind])}"
        )
    if kind in ("chunks", "sliding"):
        if capacity is not None:
            raise TypeError(f"{func}: `capacity` is derived for {kind}; do not pass it")
        if kind == "sliding":
            if "size" not in kind_args:
                raise TypeError(f"{func}: missing the window `size`")
            size = static_int(kind_args["size"], "size", func)
            step = static_int(kind_args.get("step", 1), "step", func)
            return Plan(size, Regular(step, size, True), None, -(-block // step))
        n_arg, size_arg = kind_args.get("n"), kind_args.get("size")
        if (n_arg is None) == (size_arg is None):
            raise TypeError(
                f"{func}: pass exactly one of `n` (number of pieces) and `size`, got "
                f"n={n_arg!r}, size={size_arg!r}"
            )
        if size_arg is not None:
            size = static_int(size_arg, "size", func)
            pl = Plan(size, Regular(size, size, False), None, -(-block // size))
            pl.aligned = size
            return pl
        n = static_int(n_arg, "n", func)
        big_n = source.length
        if big_n is None:
            big_n = sum(xp.size for xp in source.x_pieces())
        q, r = divmod(big_n, n)
        i = np.arange(n, dtype=np.int64)
        prov = sorted_once(i * q + np.minimum(i, r), q + (i < r))
        return Plan(max(-(-big_n // n), 1), prov, (n,), max(1, -(-block // max(q, 1))))
    if capacity is None:
        raise TypeError(
            f"{func}: `capacity` is required for {kind} (subset sizes depend on the data); "
            "see jaxsubset.grow_capacity to find it automatically"
        )
    if isinstance(capacity, str) and capacity == "auto":
        return fitted(plan(source, kind, kind_args, 1, block, name), block)
    capacity = static_int(capacity, "capacity", func)
    xdt = position_dtype(x_dtype(source))  # the dtype of the keys of `x_keys`
    per = max(1, min(block, GATHER_BUDGET // capacity))
    if kind == "bins":
        if "edges" not in kind_args:
            raise TypeError(f"{func}: missing the bin `edges`")
        edges = concrete(kind_args["edges"], "edges", func)
        check_edges(np.asarray(edges, np.float64) if edges.dtype == object else edges, func)
        e_left = host_key(edges, xdt, "left")
        e_last = host_key(edges[-1:], xdt, "right")
        (left, last), n = count_bounds(source, [(e_left[0], "left"), (e_last[0], "right")], func)
        left, last = flagged(left, e_left, n), flagged(last, e_last, n)
        right = np.concatenate([left[1:-1], last])
        return Plan(
            capacity,
            sorted_once(left[:-1], np.maximum(right - left[:-1], 0)),
            (edges.shape[0] - 1,),
            per,
        )
    closed = check_closed(
        kind_args.get("closed", "left" if kind in ("select", "dynamic") else "right"), func
    )
    lo_side, hi_side = sides(closed)
    if kind == "select":
        if "lo" not in kind_args or "hi" not in kind_args:
            raise TypeError(f"{func}: missing the x bounds `lo` and `hi`")
        lo = key_bounds(kind_args["lo"], "lo", xdt, func, lo_side)
        hi = key_bounds(kind_args["hi"], "hi", xdt, func, hi_side)
        return plan_xrange(source, lo, hi, lo_side, hi_side, capacity, per, func)
    if kind == "dynamic":
        return plan_dynamic(source, kind_args, closed, xdt, capacity, per, func)
    # rolling
    before, after = kind_args.get("before"), kind_args.get("after")
    if kind_args.get("width") is None and before is None and after is None:
        raise TypeError(f"{func}: missing the window `width` (or `before`/`after`)")
    # the in-memory resolver's own rules (`x` is only asked for its dtype)
    width, ahead, mode = window_widths(
        kind_args.get("width"),
        before,
        after,
        kind_args.get("center", False),
        closed,
        np.empty(0, xdt),
        func,
        None,
    )
    if mode == "trailing":
        width = concrete(width, "width", func, width=True)
        if np.any(width < 0):
            raise ValueError(f"{func}: `width` must be >= 0, got {width.tolist()!r}")
    at = kind_args.get("at")
    if mode != "trailing" and at is not None:
        anchors, width, ahead = np.broadcast_arrays(concrete(at, "at", func), width, ahead)
        hi = host_anchored_upper(anchors, ahead, xdt, hi_side)
        lo = host_anchored_lower(anchors, width, xdt, lo_side)
        return plan_xrange(source, lo, hi, lo_side, hi_side, capacity, per, func)
    if mode != "trailing":
        for name, v in (("before", width), ("after", ahead)):
            if np.ndim(v) != 0:
                raise ValueError(
                    f"{func}: streaming windows at every point needs a scalar `{name}`, got "
                    f"shape {np.shape(v)}; pass explicit anchors `at` for per-window extents"
                )
        # a window with `after` 0 ends at its own row (pandas' trailing rule, as in memory)
        if mode == "after" and ahead == 0:
            ahead = None
        if not source.reiterable:
            source.pieces()  # raises the one-shot error
        return Plan(
            capacity, rolling_sorted(source, width, xdt, closed, func, after=ahead), None, per
        )
    if at is None:
        if width.ndim != 0:
            raise ValueError(
                f"{func}: streaming windows at every point needs a scalar `width`, got shape "
                f"{width.shape}; pass explicit anchors `at` for per-window widths"
            )
        if not source.reiterable:
            source.pieces()  # raises the one-shot error
        return Plan(capacity, rolling_sorted(source, width, xdt, closed, func), None, per)
    anchors, width = np.broadcast_arrays(concrete(at, "at", func), width)
    hi = host_key(anchors, xdt, hi_side)
    lo = host_anchored_lower(anchors, width, xdt, lo_side)
    return plan_xrange(source, lo, hi, lo_side, hi_side, capacity, per, func)


def fitted(pl: Plan, block: int) -> Plan:
    """``pl`` with the capacity its largest range needs, rounded up to a power of two (as
    :func:`jaxsubset.required_capacity`): ``capacity="auto"``."""
    pl.capacity = next_power_of_two(pl.provider.most())
    pl.per_block = max(1, min(block, GATHER_BUDGET // pl.capacity))
    return pl


def plan_xrange(
    source: Source,
    lo: tuple,
    hi: tuple,
    lo_side: str,
    hi_side: str,
    capacity: int,
    per: int,
    func: str,
) -> Plan:
    """Ranges ``#{x below lo} .. #{x below hi}`` of keyed bounds (as ``ranges.select``)."""
    lo_k, hi_k = np.broadcast_arrays(lo[0], hi[0])
    (start, stop), n = count_bounds(source, [(lo_k, lo_side), (hi_k, hi_side)], func)
    start, stop = flagged(start, lo, n), flagged(stop, hi, n)
    return Plan(capacity, sorted_once(start, np.maximum(stop - start, 0)), lo_k.shape, per)


def x_ends(source: Source, xdt: np.dtype, func: str) -> np.ndarray:
    """The first and last x (in the dtype JAX holds x in), checked; empty for no points."""
    if isinstance(source, ArraySource):
        if source.length == 0:
            return np.empty(0, xdt)
        ends = np.asarray(source.x[[0, -1]], dtype=xdt)
        if ends.dtype.kind != "f" or not np.isnan(ends).any():
            return ends  # sorted and NaN-free: checked by the counting pass
    first = last = None
    for xp in checked_x(source.x_pieces(), func):
        if xp.size:
            first = xp[0] if first is None else first
            last = xp[-1]
    if first is None:
        return np.empty(0, xdt)
    return np.asarray([first, last], dtype=xdt)


def plan_dynamic(
    source: Source,
    kind_args: dict[str, Any],
    closed: str,
    xdt: np.dtype,
    capacity: int,
    per: int,
    func: str,
) -> Plan:
    """Hopping/tumbling windows (``every``, ``period``, ``offset``) as ``jaxsubset.dynamic``.

    The window starts follow from the first and the last x alone (polars' rules, the in-memory
    function's own code), then the windows are x-ranges like ``select``'s.
    """
    if "every" not in kind_args:
        raise TypeError(f"{func}: missing the window spacing `every`")
    ends = x_ends(source, xdt, func)
    lo, hi = host_windows(
        ends,
        kind_args["every"],
        kind_args.get("period"),
        kind_args.get("offset", 0),
        closed,
        func,
    )
    lo_side, hi_side = sides(closed)
    lo_k = key_bounds(lo, "lo", xdt, func, lo_side)
    hi_k = key_bounds(hi, "hi", xdt, func, hi_side)
    return plan_xrange(source, lo_k, hi_k, lo_side, hi_side, capacity, per, func)
