"""WHEN to compile: one decorator that runs a traced function on eager inputs in buckets.

Called eagerly (every input concrete, outside every trace: :func:`jaxsubset._core._trace.eager`), a
public function would compile one program per new shape. :func:`bucketed` turns a traced
function ``f(x, y, batch, n, **static)`` into its eager form: ``x`` is padded with its last
value (still sorted) and ``y`` with zeros to ``bucket(N)`` rows, every leaf of ``batch`` (the
per-subset arguments: bound keys, anchors, values) is broadcast to their common batch shape,
flattened and padded with its first element to ``bucket(K)``, ``f`` runs as ONE jitted program
per bucket of shapes with the traced real length ``n = N`` (so no padding row is ever inside a
subset), and the results are cut back to the real batch (and capacity): every field is the
unbucketed call's. A scalar batch is not padded (one program serves every scalar).

The traced function is the one the public function runs under ``jit``; only the inputs'
shapes differ, so the eager and traced roads cannot drift apart.
"""

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from .._core import bucketing as _bucket
from .._subsets import Subsets
from ._buckets import cut_ranges, cut_subsets, padded_xy


def pad_batch(batch: Any) -> tuple[tuple[int, ...], Any]:
    """``(shape, padded)``: the leaves of ``batch`` (concrete, None leaves kept) broadcast to
    their common shape, flattened and padded with their first element to ``bucket(K)``."""
    leaves = jax.tree_util.tree_leaves(batch)
    shape = np.broadcast_shapes(*(np.shape(a) for a in leaves))
    if not shape:
        return (), batch
    k = int(np.prod(shape))
    size = _bucket.bucket(k, _bucket.MIN_K)

    def flat(a: Any) -> Any:
        h = np.broadcast_to(np.asarray(a), shape).reshape(-1)
        if k == 0:
            return jax.device_put(np.zeros((size,), h.dtype))
        return _bucket.pad(h, size, fill=h[0])

    return tuple(shape), jax.tree_util.tree_map(flat, batch)


def cut(out: Any, shape: tuple[int, ...], capacity: int | None) -> Any:
    """The real results of a bucketed call: ``(start, count)`` -> :class:`Ranges`,
    :class:`Subsets` (``capacity`` slots), an array of per-subset values."""
    if isinstance(out, Subsets):
        if not shape:
            return out
        assert capacity is not None  # for mypy: a gather has a capacity
        return cut_subsets(out, int(np.prod(shape)), shape, capacity)
    if isinstance(out, tuple):
        return cut_ranges(out, shape)
    k = int(np.prod(shape))
    return jax.device_put(np.asarray(out).reshape(-1)[:k].reshape(shape))  # no program


def bucketed(
    *, static_argnames: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a traced ``f(x, y, batch, n, **static)`` into its eager, bucketed form.

    ``f`` returns ``(start, count)`` (flat), :class:`Subsets` (flat batch) or a flat array of
    per-subset values; ``y`` may be None. The decorated function takes ``(x, y, batch,
    **static)`` with concrete ``x``/``y``/``batch`` and returns the cut results; ``.traced``
    is ``f`` itself, ``.program`` its jitted form (one per bucket of shapes).
    """

    def decorate(traced: Callable[..., Any]) -> Callable[..., Any]:
        program = jax.jit(traced, static_argnames=static_argnames)

        def call(x: Any, y: Any, batch: Any, **static: Any) -> Any:
            xp, yp, n = padded_xy(x, y)
            shape, padded = pad_batch(batch)
            return cut(program(xp, yp, padded, n, **static), shape, static.get("capacity"))

        call.traced = traced  # type: ignore[attr-defined]
        call.program = program  # type: ignore[attr-defined]
        call.__name__ = call.__qualname__ = traced.__name__
        call.__doc__ = traced.__doc__
        return call

    return decorate
