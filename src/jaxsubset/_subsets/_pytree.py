"""The ``Subsets`` pytree: K subsets padded to one static capacity, and the gather building it."""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .._core import Array, check_nan_policy, index_dtype, static_int
from ._moments import Moments
from ._order import OrderStatistics
from ._pairs import PairStatistics


@functools.partial(jax.tree_util.register_dataclass)
@dataclasses.dataclass(frozen=True)
class Subsets(Moments, OrderStatistics, PairStatistics):
    """K subsets of an ``(x, y)`` dataset, each padded to the same static capacity ``L``.

    Every field is an array, so a ``Subsets`` passes through ``jit``, ``vmap``, ``grad`` and
    ``lax.map`` like any pytree. Subset ``k`` holds the points ``start[k] .. start[k] +
    count[k] - 1`` of the original arrays; slots past the held points are padding (zeros)
    and ``mask`` is False there. Padding never contributes to a reduction.

    Attributes:
        x: ``(*batch, L)`` the subsets' x values (padding: 0).
        y: ``(*batch, L, *channels)`` the subsets' y values (padding: 0).
        mask: ``(*batch, L)`` bool, True exactly at the real points held.
        start: ``(*batch)`` int, index in the original arrays of each subset's first point.
        count: ``(*batch)`` int, each subset's TRUE number of points, also when it exceeds
            ``L``; then ``x``/``y`` hold the first ``L`` points and ``overflow`` is True.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> s = jaxsubset.isolate(x, 2 * x, jnp.array([0, 7]), jnp.array([3, 12]), capacity=4)
        >>> s.count.tolist(), s.mask.tolist()[1], s.overflow.tolist()
        ([3, 3], [True, True, True, False], [False, False])
        >>> s.mean().tolist()
        [2.0, 16.0]
    """

    # ------------------------------------------------------------------ user functions
    def apply(
        self,
        fn: Callable[..., Any],
        *,
        batch_size: int | None = None,
        nan_policy: str = "propagate",
    ) -> Any:
        """Run ``fn(x, y, mask)`` on every subset and stack the results.

        Args:
            fn: called with one subset's ``x`` ``(L,)``, ``y`` ``(L, *channels)`` and
                ``mask`` ``(L,)``; must return a pytree of arrays of fixed shapes. Padding
                slots hold zeros: use ``mask`` to ignore them.
            batch_size: ``None`` runs all subsets at once with ``vmap`` (fastest); a positive
                int runs them ``batch_size`` at a time with ``lax.map`` (bounded memory).
            nan_policy: ``"propagate"`` passes ``mask`` as is; ``"omit"`` also clears it where
                ``y`` is NaN (in any channel), so ``fn`` sees only real readings through
                ``mask``; ``"raise"`` raises ``ValueError`` if a held ``y`` is NaN.

        Returns:
            The pytree ``fn`` returns, each leaf with the batch shape prepended.

        Example:
            >>> import jax.numpy as jnp, jaxsubset
            >>> x = jnp.arange(8.0)
            >>> s = jaxsubset.chunks(x, x**2, 2)
            >>> s.apply(lambda x, y, m: jnp.sum(jnp.where(m, y, 0))).tolist()
            [14.0, 126.0]
        """
        if batch_size is not None:
            batch_size = static_int(batch_size, "batch_size", "Subsets.apply")
        if not callable(fn):
            raise TypeError(f"Subsets.apply: `fn` must be callable, got {type(fn).__name__}")
        bshape = self.batch_shape
        k = int(np.prod(bshape, dtype=np.int64))

        def flat(a: Array) -> Array:
            return a.reshape((k,) + a.shape[len(bshape) :])

        nan_policy = check_nan_policy(nan_policy, "Subsets.apply")
        mask = self.mask
        if nan_policy == "raise":  # x, y and the mask carry the check
            self = self._raise_on_nan("Subsets.apply")
            mask = self.mask
        elif nan_policy == "omit":
            nan = self._nan().reshape(self.mask.shape + (-1,)).any(axis=-1)
            mask = mask & ~nan
        args = (flat(self.x), flat(self.y), flat(mask))
        if batch_size is None:
            out = jax.vmap(fn)(*args)
        else:
            out = jax.lax.map(lambda a: fn(*a), args, batch_size=batch_size)
        return jax.tree_util.tree_map(lambda o: o.reshape(bshape + o.shape[1:]), out)

    def scatter(self, values: Any, *, size: int, reduce: str = "mean") -> Array:
        """Put per-point results back onto a length-``size`` array.

        Args:
            values: ``(*batch, L, *rest)``: one value per slot of every subset (padding slots
                are ignored).
            size: static length of the output, usually ``len(x)`` of the original data.
            reduce: ``"mean"`` or ``"sum"`` of the values landing on one point when subsets
                overlap.

        Returns:
            ``(size, *rest)`` float; NaN at points that are in no subset.

        Example:
            >>> import jax.numpy as jnp, jaxsubset
            >>> x = jnp.arange(5.0)
            >>> s = jaxsubset.sliding(x, x, 2)
            >>> s.scatter(s.y, size=5).tolist()
            [0.0, 1.0, 2.0, 3.0, 4.0]
        """
        size = static_int(size, "size", "Subsets.scatter", minimum=0)
        if reduce not in ("mean", "sum"):
            raise ValueError(f"Subsets.scatter: `reduce` must be 'mean' or 'sum', got {reduce!r}")
        values = jnp.asarray(values)
        if tuple(values.shape[: self.mask.ndim]) != tuple(self.mask.shape):
            raise ValueError(
                "Subsets.scatter: `values` must have shape (*batch, L, ...) = "
                f"{tuple(self.mask.shape)} + (...), got {tuple(values.shape)}"
            )
        if not jnp.issubdtype(values.dtype, jnp.inexact):
            values = values.astype(jnp.result_type(float))
        rest = values.shape[self.mask.ndim :]
        offsets = jnp.arange(self.capacity, dtype=self.start.dtype)
        idx = jnp.where(self.mask, self.start[..., None] + offsets, size).reshape(-1)
        vals = values.reshape((-1,) + rest)
        total = jnp.zeros((size,) + rest, values.dtype).at[idx].add(vals, mode="drop")
        hits = jnp.zeros((size,), values.dtype).at[idx].add(1, mode="drop")
        hits = hits.reshape((size,) + (1,) * len(rest))
        out = total / jnp.where(hits > 0, hits, 1) if reduce == "mean" else total
        return jnp.where(hits > 0, out, jnp.nan)


@functools.partial(jax.jit, static_argnames=("capacity",))
def gather_padded(
    x: Array, y: Array, start: Array, count: Array, capacity: int, length: Array | None = None
) -> Subsets:
    """Read ``count`` points from ``start`` into ``capacity`` slots; never a shifted window.

    ``length`` (traced): the ranges are clipped to ``[0, length)`` instead of ``[0, N)``, so
    rows past it (bucket padding) are never read.
    """
    idt = index_dtype()
    start = jnp.asarray(start, idt)
    count = jnp.asarray(count, idt)
    start, count = jnp.broadcast_arrays(start, count)
    n = x.shape[0] if length is None else length
    # Clip [start, start + count) to [0, n) (ranges from users may run past either end): a
    # range is shortened, never shifted, and `count` is the clipped true count. Overflow-safe:
    # `start + count` is only used where it cannot exceed the index dtype.
    count = jnp.maximum(count, 0)
    past = start > jnp.iinfo(idt).max - count
    stop = jnp.where(past, n, jnp.clip(start + count, 0, n))
    start = jnp.clip(start, 0, n)
    count = jnp.maximum(stop - start, 0)
    offsets = jnp.arange(capacity, dtype=idt)
    mask = offsets < jnp.minimum(count, capacity)[..., None]
    if x.shape[0] == 0:
        xs = jnp.zeros(mask.shape, x.dtype)
        ys = jnp.zeros(mask.shape + y.shape[1:], y.dtype)
        return Subsets(x=xs, y=ys, mask=mask, start=start, count=count)
    xs, ys = read_rows((x, y), start, capacity)
    xs = jnp.where(mask, xs, 0)
    ys = jnp.where(mask.reshape(mask.shape + (1,) * (y.ndim - 1)), ys, 0)
    return Subsets(x=xs, y=ys, mask=mask, start=start, count=count)


def read_rows(arrays: tuple[Array, ...], start: Array, size: int) -> tuple[Array, ...]:
    """``a[start : start + size]`` of each array (rows along axis 0), for every ``start``.

    Each range is ONE contiguous row read (``vmap`` of ``lax.dynamic_slice``, a row copy in
    XLA, never a gather point by point) from the array padded by ``size`` rows of zeros at the
    end, so no slice is ever clamped back (``dynamic_slice``'s rule): a range running past the
    data reads zeros there, never a shifted window. XLA fuses the padding into the read (no
    copy of the array is made).

    Args:
        arrays: ``(N, ...)`` arrays of one length ``N``.
        start: ``(*batch)`` int in ``[0, N]``.
        size: static number of rows read per start.

    Returns:
        ``(*batch, size, ...)`` for every array.
    """
    batch = start.shape
    flat = start.reshape(-1)
    out = []
    for a in arrays:
        base = jnp.pad(a, [(0, size)] + [(0, 0)] * (a.ndim - 1))

        def row(i: Array, base: Array = base) -> Array:
            return lax.dynamic_slice_in_dim(base, i, size, axis=0)

        rows = jax.vmap(row)(flat)
        out.append(rows.reshape(batch + rows.shape[1:]))
    return tuple(out)
