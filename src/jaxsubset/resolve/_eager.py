"""WHEN to compile: one decorator that runs a traced function on eager inputs in buckets.

Called eagerly (every input concrete, outside every trace: :func:`jaxsubset._core._trace.eager`), a
public function would compile one program per new shape. :func:`bucketed` turns a traced
function ``f(x, y, batch, n, **static)`` into its eager form: ``x`` is padded with its last
value (still sorted) and ``y`` with zeros to ``bucket(N)`` rows, every leaf of ``batch`` (the
per-subset arguments: bound keys, anchors, values) is broadcast to their common batch shape,
flattened and padded with its first element to ``bucket(K)`` (N's buckets when there is one
subset per point), ``f`` runs as ONE jitted program per bucket of shapes with the traced real
length ``n = N`` (so no padding row is ever inside a subset), and the results are cut back to
the real batch (and capacity): every field is the unbucketed call's. A scalar batch is not
padded (one program serves every scalar). Arguments that are not per subset (``shared``: the
closing edge of bins, their real number) go to ``f`` as they are, after ``n``.

The traced function is the one the public function runs under ``jit``; only the inputs'
shapes differ, so the eager and traced roads cannot drift apart.
"""

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .._core import bucketing as _bucket
from .._subsets import Subsets
from ._buckets import cut_ranges, cut_subsets, k_bucket, padded_xy


def pad_batch(
    batch: Any, n: int, rows: bool = False, ranges: bool = False
) -> tuple[tuple[int, ...], Any]:
    """``(shape, padded)``: the leaves of ``batch`` (concrete, None leaves kept) broadcast to
    their common shape, flattened and padded with their first element to ``bucket(K)`` (to
    N's buckets when ``K == n``, a subset per point: one program for the lengths of a bucket
    of N). A scalar batch is left as it is unless ``rows`` (then it is one padded row).
    ``ranges``: ``batch`` is ``(start, count)``, padded with empty ranges at the last range's
    end instead: the ranges' order and total length stay those of the real ones, so a road
    the native kernel picks from them (the window queue for overlapping non-decreasing
    ranges, one range at a time otherwise) is the unpadded call's: the same bits eagerly,
    under ``jit`` and under ``vmap``."""
    leaves = jax.tree_util.tree_leaves(batch)
    shape = np.broadcast_shapes(*(np.shape(a) for a in leaves))
    if not shape and not rows:
        return (), batch
    k = int(np.prod(shape))
    size = k_bucket(k, n)

    def flat(a: Any) -> Any:
        h = np.broadcast_to(np.asarray(a), shape).reshape(-1)
        if k == 0:
            return jax.device_put(np.zeros((size,), h.dtype))
        return _bucket.pad(h, size, fill=h[0])

    if ranges and k > 0:
        start, count = (np.broadcast_to(np.asarray(a), shape).reshape(-1) for a in batch)
        end = start[-1] + count[-1]
        return tuple(shape), (_bucket.pad(start, size, fill=end), _bucket.pad(count, size, fill=0))
    return tuple(shape), jax.tree_util.tree_map(flat, batch)


def cut(out: Any, k: int | None, shape: tuple[int, ...], capacity: int | None) -> Any:
    """The real results of a bucketed call, the first ``k`` rows (None: an unpadded scalar
    batch) in the batch ``shape``: ``(start, count)`` -> :class:`Ranges`, :class:`Subsets`
    (``capacity`` slots), an array of per-subset values, a dict of them."""
    if isinstance(out, Subsets):
        if k is None:
            return out
        assert capacity is not None  # for mypy: a gather has a capacity
        return cut_subsets(out, k, shape, capacity)
    if isinstance(out, tuple):
        return cut_ranges(out, shape)
    rows = int(np.prod(shape))
    if isinstance(out, dict):  # per-subset results by name, each (K, *result)
        return {key: _bucket.unpad(v, rows, shape + v.shape[1:]) for key, v in out.items()}
    return jax.device_put(np.asarray(out).reshape(-1)[:rows].reshape(shape))  # no program


def bucketed(
    *, static_argnames: tuple[str, ...] = (), rows: bool = False, ranges: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a traced ``f(x, y, batch, n, *shared, **static)`` into its eager, bucketed form.

    ``f`` returns ``(start, count)`` (flat), :class:`Subsets` (flat batch), a flat array of
    per-subset values or a dict of ``(K, ...)`` per-subset results; ``y`` may be None, and ``x``
    too (``f`` then gets None, and N is ``y``'s rows). ``rows``: a scalar batch is padded as one
    row too (for an ``f`` that reduces a flat batch). ``ranges``: the batch is ``(start,
    count)``, padded with empty ranges (see :func:`pad_batch`). The decorated function takes
    ``(x, y, batch, *shared, **static)`` with concrete ``x``/``y``/``batch`` and returns the cut
    results; ``.traced`` is ``f`` itself, ``.program`` its jitted form (one per bucket). Two
    keywords of the call shape the cut and are not passed to ``f``: ``keep``, the number of
    leading subsets of a 1-D batch that are real (a batch laid out for the bucket, e.g. the
    windows of ``bucket(N)`` points), and ``cut_capacity``, the slots kept of Subsets gathered
    into more (a capacity shared by nearby calls; default ``capacity``).
    """

    def decorate(traced: Callable[..., Any]) -> Callable[..., Any]:
        program = jax.jit(traced, static_argnames=static_argnames)

        def call(
            x: Any,
            y: Any,
            batch: Any,
            *shared: Any,
            keep: int | None = None,
            cut_capacity: int | None = None,
            **static: Any,
        ) -> Any:
            xp, yp, n = padded_xy(x, y)
            # a scalar batch is padded as one row where asked or where its slots are cut
            one_row = rows or cut_capacity is not None
            shape, padded = pad_batch(batch, (y if x is None else x).shape[0], one_row, ranges)
            k = None if not shape and not one_row else int(np.prod(shape))
            if keep is not None:
                k, shape = keep, (keep,)
            capacity = static.get("capacity") if cut_capacity is None else cut_capacity
            return cut(program(xp, yp, padded, n, *shared, **static), k, shape, capacity)

        call.traced = traced  # type: ignore[attr-defined]
        call.program = program  # type: ignore[attr-defined]
        call.__name__ = call.__qualname__ = traced.__name__
        call.__doc__ = traced.__doc__
        return call

    return decorate
