"""THE statistics dispatcher over index ranges: every public statistic comes through here."""

from typing import Any

import jax.numpy as jnp
import numpy as np

from .._core import Array, concrete_only, index_dtype
from .._native import native_ranges, native_sliding
from ..reduce import (
    ORDER,
    RANGE_ROADS,
    SLIDING_ROADS,
    Request,
    base_name,
    float_dtype,
    is_count,
    road as choose_road,
)
from ._reference import reference_ranges
from ._sliding import finish, sliding_statistics
from ._tree import tree_ranges
from ._wavelet import wavelet_ranges


def clip_ranges(start: Array, count: Array, n: int | Array) -> tuple[Array, Array]:
    """``[start, start + count)`` intersected with ``[0, n)``: clipped, never shifted."""
    idt = index_dtype()
    start = jnp.asarray(start).astype(idt)
    count = jnp.maximum(jnp.asarray(count).astype(idt), 0)
    lo = jnp.clip(start, 0, n)
    # stop computed without overflow: count is at most n - start once start >= 0
    stop = jnp.where(count > n - jnp.maximum(start, 0) + jnp.maximum(-start, 0), n, start + count)
    stop = jnp.clip(stop, lo, n)
    return lo, stop - lo


def median_capacity(count: Array, capacity: Any, max_count: int | None, func: str) -> int:
    """The static padded length the padded (reference) road needs for these ranges."""
    from .._core import static_int

    if capacity is not None:
        return static_int(capacity, "capacity", func)
    if max_count is not None:
        return max(int(max_count), 1)
    message = (
        f"{func}: the median and quantiles (and method='reference') need a static "
        "`capacity` (the most points of a range) under jit for ranges whose size depends "
        "on data; compute it outside jit with jaxsubset.required_capacity(ranges.count) "
        "and pass capacity=..."
    )
    cnt = np.asarray(concrete_only(count, message))
    big = int(cnt.max()) if cnt.size else 1
    return 1 << (max(big, 1) - 1).bit_length()


def range_bound(max_count: int | None, n: int) -> int | None:
    """A static bound on every range's length clipped to ``n`` points, a power of two.

    From the ranges' own static ``max_count`` only (chunks, sliding windows), never from
    concrete counts: an eager call then takes the road the same call takes under ``jit``.
    """
    if max_count is None:
        return None
    return 1 << max(min(int(max_count), n) - 1, 0).bit_length()


def reduce_ranges(
    y: Array,
    start: Array,
    count: Array,
    request: Request,
    *,
    pieces: tuple[int, int, int, int] | None = None,
) -> dict[str, Array]:
    """Statistics of ``y`` over index ranges, each on the road ``reduce.road`` picks.

    Args:
        y: ``(N, C)`` values.
        start: ``(K,)`` first index of each range (clipped to the data here).
        count: ``(K,)`` points per range.
        request: what is asked (:class:`jaxsubset.reduce.Request`; its ``kind`` and
            ``min_periods`` are the caller's): ``statistics`` (validated by the caller),
            ``ddof``, ``omit``, ``method`` (``"auto"`` or a range road's name), ``capacity``
            (the static padded length of the padded road: the median, ``method="reference"``;
            must be given, or found by :func:`median_capacity`, when that road runs),
            ``bound`` and ``padded`` (the chooser's answer for the folded statistics), and
            ``func`` (the public function, for error messages).
        pieces: the static layout ``(n1, s1, n2, s2)`` of consecutive ranges (``n1`` of
            ``s1`` points from index 0, then ``n2`` of ``s2``: ``ranges.chunks``), or None;
            the padded road then reduces reshaped blocks instead of gathering.

    Returns:
        dict of ``(K, C)`` arrays by statistic name.
    """
    stats, method, func = request.statistics, request.method, request.func
    ddof, omit, capacity = request.ddof, request.omit, request.capacity
    start, count = clip_ranges(start, count, y.shape[0])
    # float16/bfloat16 compute in float32 (their sums would lose digits at every step); the
    # results come back in the input's dtype
    half = jnp.issubdtype(y.dtype, jnp.floating) and jnp.finfo(y.dtype).bits < 32
    in_dtype = y.dtype
    if half:
        y = y.astype(jnp.float32)
    roads: dict[tuple[str, int | None], list[str]] = {}
    for s in dict.fromkeys(stats):
        road = choose_road("ranges", s, method, func, request.padded)
        # a forced padded road and the order statistics pad to ``capacity`` (a longer range
        # is NaN); the folded statistics sent there by "auto" to ``bound`` (never truncated)
        folded = method == "auto" and base_name(s) not in ORDER
        own = request.bound if road == "reference" and folded else capacity
        roads.setdefault((road, own), []).append(s)
    out: dict[str, Array] = {}
    for (road, cap), names in roads.items():
        if road == "native":

            def pure(v: Array, s: Array, c: Array, names: tuple[str, ...] = tuple(names)):
                # the pure-JAX road "auto" takes where native is not: the non-CPU branch
                # and the derivative of the native one
                return reduce_ranges(v, s, c, request.replace(statistics=names, method="auto"))

            out.update(
                native_ranges(
                    y,
                    start,
                    count,
                    tuple(names),
                    omit=omit,
                    ddof=ddof,
                    fallback=pure,
                    capacity=capacity,
                )
            )
        elif road == "tree":
            out.update(tree_ranges(y, start, count, tuple(names), ddof=ddof, omit=omit))
        elif road == "wavelet":
            if cap is None:
                raise TypeError(f"{func}: the wavelet road needs a static `capacity`")
            out.update(wavelet_ranges(y, start, count, tuple(names), omit=omit, capacity=cap))
        else:
            if cap is None:
                raise TypeError(f"{func}: the padded road needs a static `capacity`")
            ref = reference_ranges(
                y, start, count, tuple(names), ddof=ddof, omit=omit, capacity=cap, pieces=pieces
            )
            out.update(ref)
    if half:
        out = {s: v if is_count(s) else v.astype(in_dtype) for s, v in out.items()}
    return out


def sliding_ranges(num: int, length: Array | None, window: int) -> tuple[Array, Array]:
    """The index ranges of the trailing windows of ``window`` points over ``num`` rows.

    Row ``j``'s window is ``[max(0, j - window + 1), j]`` cut at the ``length`` present rows.
    """
    idt = index_dtype()
    pos = jnp.arange(num, dtype=idt)
    start = jnp.maximum(pos - (window - 1), 0)
    stop = pos + 1 if length is None else jnp.minimum(pos + 1, jnp.asarray(length, idt))
    return start, jnp.maximum(stop - start, 0)


def reduce_sliding(
    y: Array,
    length: Array | None,
    window: int,
    request: Request,
    *,
    finite: bool = False,
) -> dict[str, Array]:
    """Statistics of ``y`` over every trailing window of ``window`` points, by road.

    The statistics ``reduce.road`` sends to the block road (``"sliding"``) are computed there
    in O(N); the others (or all, with ``method="tree"``/``"reference"``) over the equivalent
    index ranges by :func:`reduce_ranges`. Rows from ``length`` on are absent (``None``:
    every row is present). ``request``: what is asked (:class:`jaxsubset.reduce.Request`:
    ``statistics``, ``ddof``, ``omit``, ``method``, ``capacity``, ``func``, ``min_periods``).
    ``finite``: every present value is known to be finite (the block road then compiles only
    its finite program).

    Returns:
        dict of ``(N, C)`` arrays by statistic name, with ``"count"``; with an int
        ``min_periods``, ``stats`` only, finished by :func:`finish` (the block road finishes
        them in the program that computes them).
    """
    stats, method, func = request.statistics, request.method, request.func
    ddof, omit, capacity = request.ddof, request.omit, request.capacity
    min_periods = request.min_periods
    half = jnp.issubdtype(y.dtype, jnp.floating) and jnp.finfo(y.dtype).bits < 32
    in_dtype = y.dtype
    if half:  # float16/bfloat16 compute in float32, as reduce_ranges
        y = y.astype(jnp.float32)
    roads: dict[str, list[str]] = {}
    for s in dict.fromkeys((*stats, "count")):
        roads.setdefault(choose_road("sliding", s, method, func), []).append(s)
    out: dict[str, Array] = {}
    native = tuple(roads.pop("native", ()))
    if native:
        # the native kernel walks the windows itself (no range arrays) and, when it computes
        # every statistic, finishes min_periods in the same pass
        alone = not roads
        mp = min_periods if alone else None

        def pure(v: Array, m: Array) -> dict[str, Array]:
            # the pure-JAX road "auto" takes where native is not (non-CPU, derivative)
            asked = request.replace(statistics=names, method="auto", min_periods=mp)
            return reduce_sliding(v, None if length is None else m, window, asked, finite=finite)

        # finished inside: the statistics asked for only (the kernel counts for itself)
        names = tuple(dict.fromkeys(stats)) if mp is not None else native
        got = native_sliding(
            y, length, window, names, omit=omit, ddof=ddof, min_periods=mp, fallback=pure,
            capacity=capacity,
        )  # fmt: skip
        if alone:
            res = {s: got[s] for s in (stats if mp is not None else (*stats, "count"))}
            if half:
                res = {s: v if is_count(s) and mp is None else v.astype(in_dtype)
                       for s, v in res.items()}  # fmt: skip
            return res
        out.update(got)
    blocks = tuple(roads.pop("blocks", ()))
    rest = tuple(s for names in roads.values() for s in names)
    # all on the block road: it finishes them in the program computing them (no pass of
    # its own over N-long results); otherwise every result is finished here
    inside = min_periods is not None and not rest and not native
    if blocks:
        out.update(
            sliding_statistics(
                y, length, window=window, stats=stats if inside else blocks, ddof=ddof,
                omit=omit, min_periods=min_periods if inside else None, finite=finite,
            )
        )  # fmt: skip
    if rest or (min_periods is not None and not inside):
        start, count = sliding_ranges(y.shape[0], length, window)
    if rest:
        over = Request(func, "ranges", rest, method, ddof, omit, capacity)
        out.update(reduce_ranges(y, start, count, over))
    if min_periods is not None and not inside:
        out = finish(out, count, stats, min_periods, float_dtype(y.dtype))
    if half:
        done = min_periods is not None
        out = {s: v if is_count(s) and not done else v.astype(in_dtype) for s, v in out.items()}
    return out


__all__ = [
    "RANGE_ROADS",
    "SLIDING_ROADS",
    "clip_ranges",
    "median_capacity",
    "reduce_ranges",
    "reduce_sliding",
]
