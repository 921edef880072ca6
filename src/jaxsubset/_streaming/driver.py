"""``stream``: a subset analysis over data larger than memory, block by block, exactly.

How it stays exact and bounded:

1. Every subset is a global index range ``[start, start + count)`` (the library's invariant),
   found before or while the data stream by :mod:`.plan`.
2. The data pass cuts the points into windows ``[g0, g0 + B + L)``: a block of ``B`` points
   plus a look-ahead halo of ``L = capacity`` points (from as many following source pieces as
   needed, so blocks may be smaller than a window). Each subset is computed in the block holding
   its start; it is held in full (or, if it overflows, its first ``L`` points, exactly as in
   memory) because ``start - g0 < B`` and ``L <= halo``.
3. Blocks have one shape (the last one padded with zeros that no range reads) and the ranges
   go in groups of one static size, so one compiled kernel (:mod:`.kernels`) serves the whole
   stream. A background thread reads the next block while the device computes this one
   (:mod:`.buffers`): memory-mapped arrays are copied once, straight into reused aligned
   buffers that XLA's CPU client reads in place.
4. Chunks aligned with the blocks are a reshape of the block (no halo, no gather), and sliding
   windows whose size is a small multiple of the step are combined on the host from chunks of
   ``step`` points (:mod:`.pieces`), so every point is read once.
"""

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import check_nan_policy, index_dtype, require_eager, reraise, static_int
from .assembly import assemble, bring_home
from .buffers import Buffers, piece_windows, read_ahead
from .kernels import KernelSpec, block_kernel, check_compute, chunk_kernel, group_size
from .pieces import by_pieces, combine_pieces
from .plan import Plan, plan
from .sources import ArraySource, Source, open_source


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


def run_blocks(
    source: Source, pl: Plan, spec: KernelSpec, block: int, progress: bool, prefetch: int
) -> tuple[dict[str, Any], int]:
    """The data pass: every block + halo through one kernel; returns (results, N)."""
    cap = pl.capacity
    regular = pl.aligned is not None
    halo = 0 if regular else cap
    width = block + halo
    if regular:
        per = block // cap
    else:  # a whole number of kernel groups
        group = group_size(cap, spec.batch_size)
        per = -(-pl.per_block // group) * group
    idt = index_dtype()
    total = -(-source.length // block) if source.length else None
    with_x = spec.fn is not None
    x_zeros = None

    draw = Progress() if progress else None
    buffers = Buffers()
    if isinstance(source, ArraySource):  # random access: straight into the block buffers
        windows = source.windows(block, halo, with_x, buffers)
    else:
        windows = piece_windows(source.pieces(), block, halo, with_x, buffers)

    host: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    device: list[tuple[np.ndarray, Any, int]] = []
    held: list[tuple[int, tuple]] = []  # (calls issued up to, host buffers they read)
    done = 0
    big_n = 0
    for b, (g0, bx, by, n, last) in enumerate(read_ahead(windows, prefetch)):
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
        # reads them in place (no copy)
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
            device[done] = bring_home(device[done])
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
    parts = [bring_home(d)[:2] for d in device]
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
    capacity: int | str | None = None,
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
            ``"rolling"`` (``width=``, ``at=None``, ``closed="right"``, ``center=False``, or
            ``before=``/``after=`` instead of ``width``), ``"dynamic"`` (``every=``,
            ``period=None``, ``offset=0``, ``closed="left"``: hopping/tumbling windows),
            ``"bins"`` (``edges=``) or ``"select"`` (``lo=``, ``hi=``, ``closed="left"``); the
            arguments mean what they mean for :func:`jaxsubset.chunks`,
            :func:`jaxsubset.rolling`, :func:`jaxsubset.dynamic` etc. (``n``, ``size``,
            ``step`` static ints; ``at=None`` streams one window per point and needs scalar
            widths). A window reaching past its anchor (``center=True``, ``after > 0``) is
            computed in the block holding its first point, like any range: the halo of
            ``capacity`` following points holds it. ``x`` is numeric (a time axis streams as
            int64 nanoseconds, with widths and steps in nanoseconds).
        statistic: one name or a sequence of names among ``sum mean var std sem min max
            first last skew kurt median argmin argmax`` (the :class:`Subsets` reductions, the
            conventions of :data:`jaxsubset.STATISTICS`; ``argmin``/``argmax`` are global
            indices); ``count`` is accepted and always returned.
        fn: optional ``fn(x, y, mask)`` run on every subset, as :meth:`Subsets.apply`.
        capacity: static Python int, points held per subset; required for ``rolling``,
            ``dynamic``, ``bins``, ``select`` (derived for ``chunks``/``sliding``).
            ``"auto"``: the largest subset's count rounded up to a power of two (as
            :func:`jaxsubset.required_capacity`), from the x-only pass that finds the ranges
            (for ``rolling`` at every point a second such pass; no compilation, no y read), so
            no subset overflows. Or wrap the call in :func:`jaxsubset.grow_capacity`.
        block_size: static Python int, points per block (the halo comes on top).
        batch_size: for ``fn``: ``lax.map`` batch size (see :meth:`Subsets.apply`).
        columns: the x and y column names of a Parquet file.
        ddof: delta degrees of freedom of ``var``, ``std`` and ``sem``.
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
        >>> out = jaxsubset.stream(blocks, "rolling", before=1.0, after=1.0, capacity=4,
        ...                        statistic="sum")  # x[i] - 1 < x <= x[i] + 1
        >>> out["sum"].tolist()
        [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0, 17.0, 9.0]
        >>> out = jaxsubset.stream(blocks, "dynamic", every=4.0, capacity="auto",
        ...                        statistic="sum")  # capacity: the 4 points of a window
        >>> out["start"].tolist(), out["sum"].tolist()  # [0, 4), [4, 8), [8, 12)
        ([0, 4, 8], [6.0, 22.0, 17.0])
    """
    func = f"stream({kind!r})"
    require_eager(func, *(source if isinstance(source, tuple | list) else ()))
    stats, fn, batch_size = check_compute(statistic, fn, batch_size, func)
    block = static_int(block_size, "block_size", func)
    prefetch = static_int(prefetch, "prefetch", func)
    src = open_source(source, columns=columns, read_size=block, func=func)
    pl = plan(src, kind, kind_args, capacity, block)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    run_stats = stats
    pieces = by_pieces(pl, kind, stats, fn, nan_policy)
    if pieces is not None:  # sliding windows made of whole pieces: chunks, then combined
        step, run_stats = pieces
        pl = plan(src, "chunks", {"size": step}, None, block)
    if pl.aligned is not None:  # whole chunks per block: no halo, a reshape instead of a gather
        block = max(pl.aligned, block // pl.aligned * pl.aligned)
    spec = KernelSpec(pl.capacity, run_stats, fn, batch_size, ddof, nan_policy)
    with reraise():  # a fired check (nan_policy="raise") arrives as its plain ValueError
        result, big_n = run_blocks(src, pl, spec, block, progress, prefetch)
    size = int(kind_args["size"]) if kind == "sliding" else 0
    if kind == "sliding" and big_n < size:
        raise ValueError(f"{func}: `size` must be <= len(x)={big_n}, got {size}")
    if pieces is not None:
        result = combine_pieces(result, stats, size, pieces[0], big_n, nan_policy)
    return result
