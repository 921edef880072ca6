"""``scipy.stats.binned_statistic`` for 1-D x: jit-, vmap- and grad-safe, O(N) roads."""

import builtins
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._kernels import (
    _acc_dtype,
    _disjoint_extreme,
    _disjoint_moments,
    _disjoint_sum,
    _finish,
    _float_dtype,
    _moments,
    _range_extreme,
    _range_sums,
    _reference,
    _sum_block,
)
from ._median import _segment_median
from ._ranges import _bound_array
from ._stats import _raise_on_nan
from ._subsets import _gather
from ._time import time_kind, to_datetime64
from ._typing import Array, ArrayLike
from ._validate import as_x, check_nan_policy, index_dtype, is_traced, static_int


# ---------------------------------------------------------------------------- binned_statistic
BINNED_STATISTICS = ("mean", "std", "median", "count", "sum", "min", "max")


class BinnedStatisticResult(NamedTuple):
    """What :func:`binned_statistic` returns, as ``scipy.stats.binned_statistic``.

    Attributes:
        statistic: ``(*channels, nbins)`` the statistic of each bin.
        bin_edges: ``(nbins + 1,)`` the bin edges.
        binnumber: ``(N,)`` int, the bin of each point: ``1..nbins`` inside, 0 below the first
            edge and ``nbins + 1`` above the last (scipy's numbering).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([-1.0, 0.5, 1.5, 2.0, 9.0])
        >>> res = jaxsubset.binned_statistic(x, x, "count", bins=[0.0, 1.0, 2.0])
        >>> statistic, edges, binnumber = res
        >>> statistic.tolist(), binnumber.tolist()
        ([1.0, 2.0], [0, 1, 2, 2, 3])
    """

    statistic: Array
    bin_edges: Array
    binnumber: Array


_POW10 = np.array([10.0**k for k in range(0, 40)])


def _around(v: Array, dec: Array) -> Array:
    """``numpy.around(v, dec)`` for a traced integer ``dec`` (numpy's two formulas)."""
    top = int(np.floor(np.log10(float(jnp.finfo(v.dtype).max))))
    p = jnp.asarray(_POW10[: top + 1], v.dtype)[jnp.clip(jnp.abs(dec), 0, top)]
    return jnp.where(dec >= 0, jnp.rint(v * p) / p, jnp.rint(v / p) * p)


def _bucketize(x: Array, edges: Array) -> Array:
    """``searchsorted(edges, x, side="right")`` for many float ``x`` and few increasing edges.

    A lookup table over ``64 * len(edges)`` equal cells of ``[edges[0], edges[-1]]`` holds the
    answer at every cell's lower boundary; a cell rarely holds more than one edge, so the
    answer is the table's entry plus two comparisons with the next edges (an arithmetic
    guess, five gathers from small tables per point). Every answer is then verified against its
    two edges; a miss (clustered edges, or rounding at a cell boundary) sends the call to
    ``jnp.searchsorted`` under ``lax.cond``. ``jnp.searchsorted`` alone is log2(len(edges))
    dependent gathers per point: ~500 ms for 1e7 points and 1001 edges on CPU.
    """
    k1 = edges.shape[0]
    m = min(64 * k1, 1 << 20)
    idt = jnp.int32
    lo, hi = edges[0], edges[-1]
    scale = m / (hi - lo)
    cells = lo + jnp.arange(m, dtype=edges.dtype) / scale
    table = jnp.searchsorted(edges, cells, side="right").astype(idt)
    table = jnp.concatenate([jnp.zeros((1,), idt), table, jnp.full((1,), k1, idt)])
    t = jnp.clip((x - lo) * scale, -1, m)
    t = jnp.where(jnp.isnan(t), 0, jnp.floor(t)).astype(idt) + 1  # 0 below, m + 1 above
    a = table[t]
    ext = jnp.concatenate([edges, jnp.full((2,), jnp.inf, edges.dtype)])
    d = a + (ext[a] <= x).astype(idt) + (ext[a + 1] <= x).astype(idt)
    low = jnp.concatenate([jnp.array([-jnp.inf], edges.dtype), ext])
    ok = jnp.all(((low[d] <= x) & (x < low[d + 1])) | jnp.isnan(x))
    return lax.cond(ok, lambda: d, lambda: jnp.searchsorted(edges, x, side="right").astype(idt))


def _binnumber(x: Array, edges: Array, dec: Array, uniform: bool) -> tuple[Array, Array]:
    """scipy's bin numbers (``digitize`` then the last edge closed) and the on-edge flags."""
    nb = edges.shape[0] - 1
    idt = index_dtype()
    if jnp.issubdtype(edges.dtype, jnp.integer):
        # a time axis (int64 nanoseconds): exact comparisons, the last edge closed exactly
        d = jnp.searchsorted(edges, x, side="right").astype(idt)
        on_edge = x == edges[-1]
        return jnp.where(on_edge, d - 1, d), on_edge
    if uniform:
        lo, hi = edges[0], edges[-1]
        g = jnp.floor((x - lo) * (nb / (hi - lo))) + 1
        d = jnp.clip(jnp.where(jnp.isnan(g), nb + 1, g), 0, nb + 1).astype(idt)
        table = jnp.concatenate([jnp.array([-jnp.inf], edges.dtype), edges, jnp.array([jnp.inf])])
        table = table.astype(edges.dtype)
        for _ in range(2):  # the guess is off by at most one bin; two steps make it exact
            d = jnp.where(x < table[d], d - 1, jnp.where(x >= table[d + 1], d + 1, d))
            d = jnp.clip(d, 0, nb + 1)
    else:
        d = _bucketize(x, edges).astype(idt)
    on_edge = (x >= edges[-1]) & (_around(x, dec) == _around(edges[-1], dec))
    d = jnp.where(on_edge, d - 1, d)
    d = jnp.where(jnp.isnan(x), nb + 1, d) if jnp.issubdtype(x.dtype, jnp.inexact) else d
    return d, on_edge


def _on_edge_end(x: Array, i0: Array, last_edge: Array, dec: Array) -> Array:
    """For sorted ``x``: one past the last point scipy counts in the last bin, in O(log N).

    The points at and above the last edge that round (to ``dec`` decimals) to it are a
    contiguous run starting at ``i0 = searchsorted(x, last_edge, "left")``; bisect its end.
    """
    n = x.shape[0]
    if jnp.issubdtype(x.dtype, jnp.integer):  # a time axis: the last edge closed exactly
        return jnp.searchsorted(x, last_edge, side="right").astype(i0.dtype)
    target = _around(last_edge, dec)
    lo, hi = i0, jnp.asarray(n, i0.dtype)  # invariant: x[lo:] may match, x[hi:] does not
    for _ in range(max(n, 1).bit_length()):
        mid = (lo + hi) // 2
        inside = (mid < hi) & (_around(x[jnp.clip(mid, 0, max(n - 1, 0))], dec) == target)
        lo = jnp.where(inside, mid + 1, lo)
        hi = jnp.where(inside | (mid >= hi), hi, mid)
    return lo


# the one-pass variance of unsorted x is used when, in every bin, sum((v - shift)**2) is at
# most this many times sum((v - mean)**2): its relative rounding error is then <= this many
# times that of the two-pass formula
_WELL_CONDITIONED = 16.0

# points per chunk of the scatter roads (unsorted x): a chunk's bin numbers and updates stay
# in the cache and the accumulators are updated in place, so no N-long temporary is written
# (each was a fresh buffer with its page faults: std 109 -> ~65 ms on 1e7 points)
_SCATTER_CHUNK = 65536


def _fold_chunks(
    arrays: tuple[Array, ...], step: Callable[[Any, tuple[Array, ...]], Any], init: Any
) -> Any:
    """``step(acc, chunk)`` over consecutive chunks of ``_SCATTER_CHUNK`` rows of ``arrays``.

    ``lax.fori_loop`` with a static trip count (reverse-differentiable), then the ragged rest.
    """
    n = arrays[0].shape[0]
    size = _SCATTER_CHUNK
    m = n // size

    def body(k: Array, acc: Any) -> Any:
        return step(acc, tuple(lax.dynamic_slice_in_dim(a, k * size, size) for a in arrays))

    acc = lax.fori_loop(0, m, body, init) if m else init
    if n > m * size:
        acc = step(acc, tuple(a[m * size :] for a in arrays))
    return acc


def _unsorted_stat(
    x: Array,
    v: Array,
    edges: Array,
    dec: Array,
    statistic: str,
    uniform: bool,
    omit: bool,
) -> Array:
    """count/sum/mean/std/min/max ``(nbins, C)`` of unsorted ``x`` by chunked scatters.

    The conventions of :func:`_binned_core` (SciPy's; with ``omit`` NaN readings left out per
    channel). Every bin number is computed per chunk, where it is used.
    """
    nb = edges.shape[0] - 1
    c = v.shape[1]
    idt = index_dtype()
    out_dtype = _float_dtype(v.dtype)
    acc = _acc_dtype(v.dtype)
    is_float = jnp.issubdtype(v.dtype, jnp.inexact)
    omit = omit and is_float
    # real readings per bin and channel (NaN left out) where the statistic needs them
    real = omit or (statistic == "min" and is_float)
    seg = (nb + 2,)

    def bins(xc: Array) -> Array:
        return _binnumber(xc.astype(edges.dtype), edges, dec, uniform)[0]

    def counted(cnt: Array, dc: Array, vc: Array) -> Array:
        if real:
            return cnt.at[dc].add((~jnp.isnan(vc)).astype(acc))
        return cnt.at[dc].add(jnp.ones(dc.shape, acc))

    cnt0 = jnp.zeros(seg + (c,) if real else seg, acc)

    def finish_count(cnt: Array) -> Array:
        cnt = cnt[1:-1].astype(idt)
        return cnt if real else jnp.broadcast_to(cnt[:, None], (nb, c))

    if statistic == "count":
        cnt = _fold_chunks((x, v), lambda a, ch: counted(a, bins(ch[0]), ch[1]), cnt0)
        return finish_count(cnt).astype(out_dtype if out_dtype != jnp.float16 else jnp.float32)
    if statistic in ("min", "max"):
        vf = v.astype(out_dtype)
        ident = jnp.inf if statistic == "min" else -jnp.inf

        def step_ext(state: tuple, ch: tuple) -> tuple:
            cnt, ext = state
            dc, vc = bins(ch[0]), ch[1]
            if real:  # NaN skipped: read as the identity
                vc = jnp.where(jnp.isnan(vc), ident, vc)
            ext = ext.at[dc].min(vc) if statistic == "min" else ext.at[dc].max(vc)
            return counted(cnt, dc, ch[1]), ext

        ext0 = jnp.full(seg + (c,), ident, out_dtype)
        cnt, ext = _fold_chunks((x, vf), step_ext, (cnt0, ext0))
        return jnp.where(finish_count(cnt) > 0, ext[1:-1], jnp.nan)

    def sums(shift: Array | None, second: bool) -> tuple:
        # count, sum of (v - shift) and, with ``second``, of its square (NaN as 0 with omit)
        def step(state: tuple, ch: tuple) -> tuple:
            cnt, s1, s2 = state
            dc, vc = bins(ch[0]), ch[1].astype(acc)
            z = vc if shift is None else vc - (shift[dc] if shift.ndim == 2 else shift)
            if omit:
                z = jnp.where(jnp.isnan(vc), 0, z)
            s1 = s1.at[dc].add(z)
            if second:
                s2 = s2.at[dc].add(z * z)
            return counted(cnt, dc, ch[1]), s1, s2

        zero = jnp.zeros(seg + (c,), acc)
        cnt, s1, s2 = _fold_chunks((x, v), step, (cnt0, zero, zero))
        return finish_count(cnt), s1[1:-1], s2[1:-1]

    if statistic in ("sum", "mean"):
        cnt, total, _ = sums(None, False)
        if statistic == "sum":
            return total.astype(out_dtype)
        mean = total / jnp.where(cnt > 0, cnt, 1).astype(acc)
        return jnp.where(cnt > 0, mean, jnp.nan).astype(out_dtype)
    if statistic != "std":
        raise ValueError(f"unsupported statistic {statistic!r}")

    def std_from(cnt: Array, s1: Array, s2: Array, mean: Array) -> Array:
        safe = jnp.where(cnt > 0, cnt, 1).astype(acc)
        std = jnp.sqrt(jnp.maximum(s2 - s1 * s1 / safe, 0) / safe)
        std = jnp.where(jnp.isfinite(mean), std, jnp.nan)
        return jnp.where(cnt > 0, std, jnp.nan).astype(out_dtype)

    def two_pass() -> Array:
        # scipy's: each bin's mean, then the deviations from it (no digits lost)
        cnt, total, _ = sums(None, False)
        safe = jnp.where(cnt > 0, cnt, 1).astype(acc)
        mean = jnp.where(cnt > 0, total / safe, jnp.nan)
        pad = jnp.zeros((1, c), acc)
        mean_pt = jnp.concatenate([pad, jnp.where(jnp.isfinite(mean), mean, 0), pad])
        _, s1, s2 = sums(mean_pt, True)
        return std_from(cnt, s1, s2, mean)

    if omit:
        return two_pass()
    # ONE pass of scatters (count, sum z, sum z^2 with z = v - a global shift) when every bin
    # is well conditioned (its spread not tiny against its distance from the shift: then no
    # digits are lost); otherwise scipy's two passes
    cref = _reference(v)
    cnt, s1, s2 = sums(cref, True)
    safe = jnp.where(cnt > 0, cnt, 1).astype(acc)
    m2 = jnp.maximum(s2 - s1 * (s1 / safe), 0)
    fine = (s2 <= _WELL_CONDITIONED * m2) | (cnt <= 1) | ~jnp.isfinite(s2)

    def one_pass() -> Array:
        std = jnp.sqrt(m2 / safe)
        std = jnp.where(jnp.isfinite(s1) & jnp.isfinite(s2), std, jnp.nan)
        return jnp.where(cnt > 0, std, jnp.nan).astype(out_dtype)

    return lax.cond(jnp.all(fine), one_pass, two_pass)


@functools.partial(
    jax.jit, static_argnames=("statistic", "uniform", "x_sorted", "capacity", "fn", "omit")
)
def _binned_core(
    x: Array,
    v: Array,
    edges: Array,
    dec: Array,
    statistic: str,
    uniform: bool,
    x_sorted: bool,
    capacity: int | None,
    fn: Callable | None,
    omit: bool = False,
) -> tuple[Array, Array]:
    """Statistic ``(nbins, C)`` and binnumber ``(N,)``; ``v`` is ``(N, C)``.

    With ``omit`` NaN values are left out per channel: every statistic (count included) sees
    only the real readings. The O(N) roads stay: NaN -> 0 in the sums beside a count of real
    readings, NaN -> +inf/-inf for min/max, and the median's radix select ranks only the real
    keys (NaN keys sort above +inf and are never reached).
    """
    nb = edges.shape[0] - 1
    n_pts, c = v.shape
    idt = index_dtype()
    xe = x.astype(edges.dtype)
    d, on_edge = _binnumber(xe, edges, dec, uniform)
    if not x_sorted and statistic in ("count", "sum", "mean", "std", "min", "max"):
        # ``d`` is returned (binnumber); unused by the caller, XLA drops it
        return _unsorted_stat(x, v, edges, dec, statistic, uniform, omit), d
    out_dtype = _float_dtype(v.dtype)
    acc = _acc_dtype(v.dtype)
    is_float = jnp.issubdtype(v.dtype, jnp.inexact)
    omit = omit and is_float
    nan_v = jnp.isnan(v) if is_float else jnp.zeros(v.shape, bool)
    if x_sorted:
        left = jnp.searchsorted(xe, edges, side="left").astype(idt)
        last = _on_edge_end(xe, left[-1], edges[-1], dec)
        bounds = left.at[-1].set(last)
        start, stop = bounds[:-1], jnp.maximum(bounds[1:], bounds[:-1])
        count = stop - start
    else:  # the median and a callable (the other statistics returned above)
        count = jnp.zeros((nb + 2,), idt).at[d].add(1)[1:-1]
        start = stop = None
    cnt = jnp.broadcast_to(count[:, None], (nb, c))
    mom = None
    if x_sorted and (omit or (statistic == "min" and is_float)):
        # the real readings of every bin and channel (SciPy's "min" skips NaN on its own)
        if statistic in ("sum", "mean", "std"):
            mom = _moments(v, start, stop, 1, omit)  # also counts the NaN of every range
            cnt = cnt - mom["nan"].astype(idt)
        elif statistic in ("min", "max"):
            pass  # counted below, and only when some bin's extreme is the identity
        else:  # one fused block-sum pass, cheaper than a check for any NaN
            nan_n, _ = _range_sums(v, lambda a: (jnp.isnan(a).astype(acc),), start, stop)
            cnt = cnt - nan_n.astype(idt)
    if statistic == "count":
        return cnt.astype(out_dtype if out_dtype != jnp.float16 else jnp.float32), d
    v_real = jnp.where(nan_v, 0, v) if omit else v  # zero gradient at omitted readings
    block = min(_sum_block(n_pts, nb), 64) if x_sorted else 1
    if statistic == "std" and not omit and block > 1 and n_pts // (2 * block) > 0:
        # sorted x: one pass (block-shifted moments), deviations from each bin's own mean;
        # 128-point blocks as the sums (1e7 points, 1000 bins: ~10% faster than 64; 256 was
        # 3x slower, the points outside whole blocks then dominate)
        mean, s1, s2 = _disjoint_moments(v.astype(acc), start, stop, 2 * block)
        safe = jnp.where(cnt > 0, cnt, 1).astype(acc)
        std = jnp.sqrt(jnp.maximum(s2 - s1 * s1 / safe, 0) / safe)
        std = jnp.where(jnp.isfinite(mean), std, jnp.nan)
        return jnp.where(cnt > 0, std, jnp.nan).astype(out_dtype), d
    if statistic in ("sum", "mean") and not omit and block > 1 and n_pts // (2 * block) > 0:
        total = _disjoint_sum(v.astype(acc), start, stop, 2 * block)
        if statistic == "sum":
            return total.astype(out_dtype), d
        mean = total / jnp.where(cnt > 0, cnt, 1).astype(acc)
        return jnp.where(cnt > 0, mean, jnp.nan).astype(out_dtype), d
    if statistic in ("sum", "mean", "std"):

        def classic(v_real: Array, mom: dict[str, Array] | None) -> Array:
            # sorted x (unsorted x took _unsorted_stat)
            if mom is None:
                mom = _moments(v, start, stop, 1)
            total = _finish("sum", mom, cnt.astype(acc), 0, acc, skipna=omit)
            if statistic == "sum":
                return total.astype(out_dtype)
            safe = jnp.where(cnt > 0, cnt, 1).astype(acc)
            mean = jnp.where(cnt > 0, total / safe, jnp.nan)
            if statistic == "mean":
                return mean.astype(out_dtype)
            mean_pt = jnp.concatenate([jnp.zeros((1, c), acc), mean, jnp.zeros((1, c), acc)])
            if omit:
                # an omitted reading stands in as its bin's mean: a deviation of exactly zero
                # (the per-point gather only when some reading is missing)
                def filled(v: Array) -> Array:
                    fill = mean_pt[d]
                    return jnp.where(nan_v, jnp.where(jnp.isfinite(fill), fill, 0), v)

                v_real = lax.cond(jnp.any(nan_v), filled, lambda v: v, v)
            # deviations from each bin's own mean, so no digits are lost
            if block > 1 and n_pts // block > 0:
                # (an omitted reading, filled with its bin's mean, deviates by zero)
                _, s1, s2 = _disjoint_moments(v_real.astype(acc), start, stop, block)
            else:
                dev = v_real.astype(acc) - mean_pt[d]
                s1 = jax.ops.segment_sum(dev, d, nb + 2)[1:-1]
                s2 = jax.ops.segment_sum(dev**2, d, nb + 2)[1:-1]
            m2 = jnp.maximum(s2 - s1 * s1 / safe, 0)
            std = jnp.sqrt(m2 / safe)
            std = jnp.where(jnp.isfinite(mean), std, jnp.nan)
            return jnp.where(cnt > 0, std, jnp.nan).astype(out_dtype)

        return classic(v_real, mom), d
    vf = v.astype(out_dtype)
    if statistic in ("min", "max"):

        def extreme(vf: Array) -> Array:
            if x_sorted and block > 1 and n_pts // (2 * block) > 0:
                return _disjoint_extreme(vf, start, stop, statistic, 2 * block)
            return _range_extreme(vf, start, stop, statistic)

        if omit or (statistic == "min" and is_float):
            # NaN skipped: read as the identity (fused into the block reduction: measured no
            # slower than the plain extremes on CPU)
            ident = jnp.inf if statistic == "min" else -jnp.inf
            ext = extreme(jnp.where(jnp.isnan(vf), ident, vf))

            # a bin of only NaN reads as the identity: its real readings are counted only
            # when some bin does (no pass over the data otherwise)
            def real(cnt: Array) -> Array:
                nan_n, _ = _range_sums(v, lambda a: (jnp.isnan(a).astype(acc),), start, stop)
                return cnt - nan_n.astype(idt)

            cnt = lax.cond(jnp.any(ext == ident), real, lambda cnt: cnt, cnt)
        else:
            ext = extreme(vf)
        return jnp.where(cnt > 0, ext, jnp.nan), d
    if statistic == "median":
        if x_sorted:  # the counts are known from the bounds: no scatter
            below = start[:1]
            above = jnp.full((1,), n_pts, idt) - jnp.maximum(stop[-1:], start[-1:])
            cnt_all = jnp.concatenate([below, count, above])
        else:  # counted by the median's first histogram (omit: counted here, NaN apart)
            cnt_all = jnp.zeros((nb + 2,), idt).at[d].add(1) if omit else None
        if omit:
            # canonical (positive) NaN keys sort above +inf: ranking only the real readings
            # of each bin never reaches them
            vq = jnp.where(nan_v, jnp.nan, vf)
            nan_all = jnp.zeros((nb + 2, c), idt).at[d].add(nan_v.astype(idt))
            cnts = cnt_all[:, None] - nan_all
            med = jnp.stack(
                [_segment_median(d, vq[:, i], nb + 2, cnts[:, i]) for i in builtins.range(c)], 1
            )
        else:
            # one channel at a time: vmap turns the radix scatters into batched scatters,
            # measured ~1.5x slower on CPU even for a single channel
            med = jnp.stack(
                [_segment_median(d, vf[:, i], nb + 2, cnt_all) for i in builtins.range(c)], 1
            )
        return med[1:-1].astype(out_dtype), d
    # a callable: padded subsets of every bin
    if x_sorted:
        ys, gstart = vf, start
    else:
        order = jnp.argsort(d, stable=True)
        ys = vf[order]
        counts_all = jnp.zeros((nb + 2,), idt).at[d].add(1)
        gstart = jnp.concatenate([jnp.zeros((1,), idt), jnp.cumsum(counts_all)[:-1]])[1:-1]
    sub = _gather(jnp.zeros((n_pts,), out_dtype), ys, gstart, count, capacity)

    def per_bin(yb: Array, mb: Array) -> Array:
        def one(col: Array) -> Array:
            m = mb & ~jnp.isnan(col) if omit else mb  # "omit": the mask leaves NaN out
            return jnp.asarray(fn(col, m))

        return jax.vmap(one, in_axes=1)(yb)

    res = jax.vmap(per_bin)(sub.y, sub.mask)
    res = jnp.asarray(res)
    if res.shape != (nb, c):
        raise ValueError(
            "binned_statistic: a callable `statistic` must return a scalar per bin, got shape "
            f"{res.shape[2:] if res.ndim > 2 else ()}"
        )
    res = res.astype(jnp.promote_types(res.dtype, out_dtype))
    return jnp.where((count > capacity)[:, None], jnp.nan, res), d


def _edges_dtype(x: Array) -> Any:
    return x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.result_type(float)


def _bin_count(bins: Any, func: str) -> int | None:
    """The static number of bins when ``bins`` is an int, None when it holds the edges."""
    if is_traced(bins) and jnp.ndim(bins) == 0:
        static_int(bins, "bins", func)  # raises: the number of bins sets a shape
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool | np.bool_):
        return static_int(bins, "bins", func)
    return None


def binned_statistic(
    x: ArrayLike,
    values: ArrayLike,
    statistic: str | Callable = "mean",
    bins: int | ArrayLike = 10,
    range: tuple[Any, Any] | None = None,  # noqa: A002 - scipy's name
    *,
    capacity: int | None = None,
    x_sorted: bool | None = None,
    nan_policy: str = "propagate",
) -> BinnedStatisticResult:
    """``scipy.stats.binned_statistic`` for 1-D ``x``: jit-, vmap- and grad-safe, in O(N).

    Same bins as scipy (``numpy.histogram`` edges, every bin half-open but the last, which
    is closed), same ``binnumber`` (0 below the range, ``nbins + 1`` above it), same results:
    NaN for empty bins (0 for ``"sum"`` and ``"count"``), ``"std"`` with ``ddof=0``, float
    ``"count"``. ``x`` need not be sorted: unsorted ``x`` is reduced by scatters into the bins
    (one per moment; the median by a radix select of a few histogram passes, never a sort);
    sorted ``x`` (detected eagerly, or promised with ``x_sorted=True``) takes the block road:
    every bin is a contiguous range, so one pass over ``values`` per statistic. ``"std"``
    keeps scipy's two-pass accuracy: sorted ``x`` measures each block from its own first
    value and each bin from its own first value (Chan's combination); unsorted ``x`` takes
    one pass about a global shift only when every bin is well conditioned for it, and
    scipy's two passes otherwise.

    Args:
        x: ``(N,)`` sample positions (any order; NaN raises eagerly).
        values: ``(N,)`` or ``(*channels, N)`` values, channels leading as in scipy.
        statistic: ``"mean"``, ``"std"``, ``"median"``, ``"count"``, ``"sum"``, ``"min"``,
            ``"max"`` or a callable ``fn(values, mask) -> scalar`` applied to every bin's
            values padded to ``capacity`` (``mask`` marks the real ones).
        bins: static int, the number of equal-width bins, or ``(nbins + 1,)`` increasing edges
            (values may be traced; ``nbins`` is static).
        range: ``(lo, hi)`` (or ``[(lo, hi)]``) for int ``bins``; default ``(min(x), max(x))``.
            May be traced. Ignored with explicit edges.
        capacity: static padded bin size for a callable ``statistic``; eagerly it defaults to
            the largest bin rounded up to a power of two, under jit it is required. Bins with
            more points give NaN.
        x_sorted: ``True`` promises ascending ``x`` (fast road under jit); ``None`` checks
            concrete ``x`` and assumes unsorted under jit; ``False`` forces the scatter road.
        nan_policy: NaN in ``values``. ``"propagate"`` (default) is SciPy's own behaviour:
            ``"sum"``, ``"mean"``, ``"std"`` and ``"max"`` of a bin holding a NaN are NaN, the
            median is the middle of the values sorted with NaN last (NaN when a NaN reaches the
            middle), ``"min"`` skips NaN (NaN only for a bin of NaN) and ``"count"`` counts
            every point. ``"omit"``: NaN readings are removed per channel first, so every
            statistic, ``"count"`` included, equals SciPy's on the NaN-free data (a callable
            gets a ``mask`` without them); still O(N), the gradient zero at omitted readings.
            ``"raise"``: ValueError if ``values`` hold NaN (at run time under ``jit``).

    Time axes: ``x`` as ``numpy.datetime64`` (or ``timedelta64``) becomes exact int64
    nanoseconds (JAX's 64-bit mode); ``bins`` edges and ``range`` are then dates (datetime64,
    ISO strings), int ``bins`` split the range in exact integer arithmetic
    (``lo + (k * (hi - lo)) // nbins``: float64 cannot hold nanoseconds near 1e18), the last
    bin is closed exactly at its edge (no rounding), and ``bin_edges`` come back as
    ``datetime64[ns]``.

    Returns:
        :class:`BinnedStatisticResult` ``(statistic, bin_edges, binnumber)``.

    Raises:
        ValueError: concrete ``x`` holding NaN, ``range`` with ``lo > hi``, edges not strictly
            increasing, values not matching ``len(x)``, an unknown statistic or ``nan_policy``,
            or NaN in ``values`` with ``nan_policy="raise"``.
        TypeError: numbers as ``bins``/``range`` on a time axis, or dates on a numeric one.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 1.0, 2.0, 2.5, 4.0])
        >>> r = jaxsubset.binned_statistic(x, x, "sum", bins=2)
        >>> r.statistic.tolist(), r.bin_edges.tolist(), r.binnumber.tolist()
        ([1.0, 8.5], [0.0, 2.0, 4.0], [1, 1, 2, 2, 2])
        >>> jaxsubset.binned_statistic(x, x, "count", bins=[0.0, 1.0, 3.0]).statistic.tolist()
        [1.0, 3.0]
    """
    func = "binned_statistic"
    fn = None
    if callable(statistic):
        fn, statistic = statistic, "callable"
    elif statistic not in BINNED_STATISTICS:
        raise ValueError(
            f"{func}: `statistic` must be one of {', '.join(map(repr, BINNED_STATISTICS))} "
            f"or a callable, got {statistic!r}"
        )
    nan_policy = check_nan_policy(nan_policy, func)
    tk = time_kind(x)
    x = as_x(x, func)
    n_pts = x.shape[0]
    if not is_traced(x) and jnp.issubdtype(x.dtype, jnp.inexact):
        np_x = np.asarray(x)
        if np.isnan(np_x).any():
            raise ValueError(
                f"{func}: `x` holds NaN at index {int(np.argmax(np.isnan(np_x)))}; a point with "
                "no position cannot be binned"
            )
    if isinstance(values, list | tuple) and not is_traced(values):
        values = np.asarray(values)
    if not is_traced(values):
        np_v = np.asarray(values)
        if np_v.dtype.kind not in "biuf":
            raise TypeError(f"{func}: `values` must be real numeric, got dtype {np_v.dtype}")
        values = jnp.asarray(values)
    if values.ndim == 0 or values.shape[-1] != n_pts:
        raise ValueError(
            f"{func}: `values` must have shape (N,) or (*channels, N) with N = len(x) = "
            f"{n_pts}, got {tuple(values.shape)}"
        )
    if nan_policy == "raise":
        _raise_on_nan(values, func, "values")
    if tk is not None:
        return _binned_time(
            x, values, statistic, fn, bins, range, tk, capacity, x_sorted, nan_policy
        )
    if time_kind(bins) is not None or time_kind(range) is not None:
        raise TypeError(
            f"{func}: `bins`/`range` hold dates or durations but `x` is not a time axis"
        )
    edt = _edges_dtype(x)
    nbins = _bin_count(bins, func)
    uniform = nbins is not None
    if uniform:
        if range is not None:
            rg = range
            if not is_traced(rg) and len(rg) == 1:
                rg = rg[0]
            if is_traced(rg) or not isinstance(rg, tuple | list) or len(rg) != 2:
                rg = jnp.asarray(rg).reshape(-1)
                if rg.shape != (2,):
                    raise ValueError(f"{func}: `range` must be (lo, hi), got shape {rg.shape}")
            lo, hi = rg[0], rg[1]
        else:
            if n_pts == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = jnp.min(x), jnp.max(x)
        if not is_traced((lo, hi)):
            flo, fhi = float(lo), float(hi)
            if not (np.isfinite(flo) and np.isfinite(fhi)):
                raise ValueError(f"{func}: `range` must be finite, got ({flo}, {fhi})")
            if fhi < flo:
                raise ValueError(f"{func}: in `range`, start must be <= stop, got ({flo}, {fhi})")
            if flo == fhi:
                flo, fhi = flo - 0.5, fhi + 0.5
            np_edges = np.linspace(flo, fhi, nbins + 1, dtype=np.dtype(edt))
            edges = jnp.asarray(np_edges, edt)
        else:
            wdt = _acc_dtype(edt)
            lo = jnp.asarray(lo, wdt)
            hi = jnp.asarray(hi, wdt)
            same = lo == hi
            lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
            step = (hi - lo) / nbins
            edges = (jnp.arange(nbins + 1, dtype=wdt) * step + lo).at[-1].set(hi).astype(edt)
    else:
        edges = bins if is_traced(bins) else jnp.asarray(np.asarray(bins, float))
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(edt)
        nbins = edges.shape[0] - 1
    if is_traced(edges):
        dmin = jnp.min(jnp.diff(edges))
        dec = (jnp.trunc(-jnp.log10(dmin)) + 6).astype(jnp.int32)
    else:
        dmin = float(np.min(np.diff(np.asarray(edges))))
        if not dmin > 0:
            raise ValueError(
                f"{func}: `bins` edges must increase strictly; the smallest edge difference "
                f"is {dmin!r}"
            )
        dec = jnp.asarray(int(-np.log10(dmin)) + 6, jnp.int32)
    return _binned_run(
        x, values, statistic, fn, edges, dec, uniform, capacity, x_sorted, nan_policy
    )


def _binned_run(
    x: Array,
    values: Array,
    statistic: str,
    fn: Callable | None,
    edges: Array,
    dec: Array,
    uniform: bool,
    capacity: int | None,
    x_sorted: bool | None,
    nan_policy: str,
) -> BinnedStatisticResult:
    """The shared tail of :func:`binned_statistic`: sortedness, capacity, channels, the core."""
    func = "binned_statistic"
    n_pts = x.shape[0]
    nbins = edges.shape[0] - 1
    if x_sorted is None:
        if is_traced(x):
            x_sorted = False
        else:
            np_x = np.asarray(x)
            x_sorted = bool(np_x.size < 2 or np.all(np_x[1:] >= np_x[:-1]))
    x_sorted = bool(x_sorted) and n_pts > 0  # no points: the scatter road handles it simply
    if fn is not None:
        if capacity is None:
            if is_traced((x, edges)):
                raise TypeError(
                    f"{func}: a callable `statistic` needs a static `capacity` under jit; "
                    "compute it eagerly (the largest bin count) and pass capacity=..."
                )
            d, _ = _binnumber(x.astype(edges.dtype), edges, dec, uniform)
            big = int(np.bincount(np.asarray(d), minlength=nbins + 2)[1:-1].max(initial=1))
            capacity = 1 << (max(big, 1) - 1).bit_length()
        capacity = static_int(capacity, "capacity", func)
    ch = tuple(values.shape[:-1])
    v = jnp.moveaxis(values.reshape((int(np.prod(ch)), n_pts)), 0, 1)
    omit = nan_policy == "omit"
    stat, d = _binned_core(x, v, edges, dec, statistic, uniform, x_sorted, capacity, fn, omit)
    stat = jnp.moveaxis(stat, 1, 0).reshape(ch + (nbins,))
    return BinnedStatisticResult(stat, edges, d)


def _binned_time(
    x: Array,
    values: Array,
    statistic: str,
    fn: Callable | None,
    bins: Any,
    rng: Any,
    tk: str,
    capacity: int | None,
    x_sorted: bool | None,
    nan_policy: str,
) -> BinnedStatisticResult:
    """:func:`binned_statistic` on a time axis: ``x`` already int64 nanoseconds, edges exact.

    Int ``bins`` split ``range`` (dates, default the first and last time) in exact integer
    arithmetic, ``lo + floor(k * (hi - lo) / nbins)``: float64 cannot hold nanoseconds near
    1e18. The edges come back as ``datetime64[ns]`` (``timedelta64[ns]`` for a duration axis)
    when they are concrete.
    """
    func = "binned_statistic"
    nbins = _bin_count(bins, func)
    uniform = nbins is not None
    if uniform:
        if rng is not None:
            if not is_traced(rng) and len(rng) == 1 and not isinstance(rng, str):
                rng = rng[0]
            if is_traced(rng):
                pair = jnp.asarray(rng).reshape(-1)
            else:
                if not isinstance(rng, tuple | list | np.ndarray) or len(rng) != 2:
                    raise ValueError(f"{func}: `range` must be (lo, hi) dates, got {rng!r}")
                lo_v = _bound_array(rng[0], "range", x, func, tk)
                hi_v = _bound_array(rng[1], "range", x, func, tk)
                pair = jnp.stack([jnp.asarray(lo_v).reshape(()), jnp.asarray(hi_v).reshape(())])
            if pair.shape != (2,):
                raise ValueError(f"{func}: `range` must be (lo, hi), got shape {pair.shape}")
            lo, hi = pair[0], pair[1]
        else:
            if x.shape[0] == 0:
                raise ValueError(f"{func}: `x` is empty; pass `range` to define the bins")
            lo, hi = jnp.min(x), jnp.max(x)
        if not is_traced((lo, hi)):
            ilo, ihi = int(lo), int(hi)
            if ihi < ilo:
                raise ValueError(
                    f"{func}: in `range`, start must be <= stop, got "
                    f"({to_datetime64([ilo])[0]}, {to_datetime64([ihi])[0]})"
                )
            if ilo == ihi:  # scipy widens an empty range by half a unit each side
                ilo, ihi = ilo - nbins, ihi + nbins
            if ihi - ilo < nbins:
                raise ValueError(
                    f"{func}: `range` spans {ihi - ilo} ns, fewer than bins={nbins}; the edges "
                    "must increase strictly"
                )
            np_edges = np.array(
                [ilo + (k * (ihi - ilo)) // nbins for k in builtins.range(nbins + 1)]
            )
            edges = jnp.asarray(np_edges.astype(np.int64))
        else:
            lo, hi = jnp.asarray(lo, jnp.int64), jnp.asarray(hi, jnp.int64)
            same = lo == hi
            lo, hi = jnp.where(same, lo - nbins, lo), jnp.where(same, hi + nbins, hi)
            span = hi - lo
            q, r = span // nbins, span % nbins
            k = jnp.arange(nbins + 1, dtype=jnp.int64)
            edges = lo + k * q + (k * r) // nbins
    else:
        if is_traced(bins):
            edges = jnp.asarray(bins)
        else:
            edges = jnp.asarray(_bound_array(bins, "bins", x, func, tk))
        if edges.ndim != 1 or edges.shape[0] < 2:
            raise ValueError(
                f"{func}: `bins` must be an int or a 1-D array of at least 2 edges, got shape "
                f"{tuple(edges.shape)}"
            )
        edges = edges.astype(jnp.int64)
        if not is_traced(edges):
            e = np.asarray(edges)
            bad = e[1:] <= e[:-1]
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"{func}: `bins` edges must increase strictly, but bins[{i}]="
                    f"{to_datetime64(e[i : i + 1])[0]} >= bins[{i + 1}]="
                    f"{to_datetime64(e[i + 1 : i + 2])[0]}"
                )
    dec = jnp.asarray(0, jnp.int32)  # unused: a time axis compares exactly
    res = _binned_run(x, values, statistic, fn, edges, dec, False, capacity, x_sorted, nan_policy)
    if not is_traced(res.bin_edges):
        unit = "datetime64[ns]" if tk == "M" else "timedelta64[ns]"
        res = res._replace(bin_edges=np.asarray(res.bin_edges, np.int64).view(unit))
    return res
