"""Eager buckets: one compiled program per bucket of shapes for the eager constructors.

Called outside `jit` (every argument concrete, no `length`), the constructors pad x with its
last value (still sorted) and y with zeros to `_bucket.bucket(N)` rows and run ONE jitted
program per bucket of shapes: the ranges are resolved with the traced `length=N`, so no padding
row is in any range and the gather never reads one, into a number of subsets and a capacity that
depend only on the bucket; the Subsets are then cut back to the real number of subsets and
capacity. Every field (values, mask, start, count) is the unbucketed call's.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    bucketing as _bucket,
    index_dtype,
)
from .._subsets import Subsets
from ._keys import Key
from ._type import Ranges


# Called outside `jit` (every argument concrete, no `length`), the constructors pad x with its
# last value (still sorted) and y with zeros to `_bucket.bucket(N)` rows and run ONE jitted
# program per bucket of shapes: the ranges are resolved with the traced `length=N`, so no
# padding row is in any range and the gather never reads one, into a number of subsets and a
# capacity that depend only on the bucket; the Subsets are then cut back to the real number of
# subsets and capacity. Every field (values, mask, start, count) is the unbucketed call's.


def eager(length: Any, *args: Any) -> bool:
    """Whether a constructor call is bucketed: no ``length`` and ``_bucket.bucketed(*args)``."""
    return length is None and _bucket.bucketed(*args)


def keep_host(length: Any, x: Any, *others: Any) -> bool:
    """Whether a constructor keeps host ``x`` and ``y`` there (:func:`jaxsubset._core.as_xy`):
    an eager call with points, which pads them into new arrays anyway (a device copy first
    would be one copy more, of fresh memory)."""
    return eager(length, x, *others) and np.size(x) > 0


def padded_xy(x: Array | None, y: Array | None) -> tuple[Any, Any, Array]:
    """``x`` (padded with its last value), ``y`` (with zeros) at ``bucket(N)`` rows, and N
    (``x``'s rows, or ``y``'s when ``x`` is None)."""
    n = (y if x is None else x).shape[0]  # type: ignore[union-attr]
    size = _bucket.bucket(n)
    yp = None if y is None else _bucket.pad(y, size)
    if x is None:
        return None, yp, jnp.asarray(n, index_dtype())
    last = np.asarray(x)[-1] if _bucket.on_host(x) else x[-1]
    return _bucket.pad(x, size, fill=last), yp, jnp.asarray(n, index_dtype())


def k_bucket(k: int, n: int) -> int:
    """The bucket of ``k`` subsets (N's buckets when there is one per point)."""
    return _bucket.bucket(k, _bucket.MIN_N if k == n else _bucket.MIN_K)


def cut(a: Array, k: int, batch: tuple[int, ...], cap: int | None) -> Array:
    """Rows ``[:k]`` (and slots ``[:cap]``) of a padded field, reshaped to ``batch``."""
    if _bucket.on_host(a):  # on the host: no program per shape
        h = np.asarray(a)[:k]
        h = h if cap is None else h[:, :cap]
        return _bucket.put(h.reshape(batch + h.shape[1:]))
    a = a[:k] if cap is None else a[:k, :cap]
    return a.reshape(batch + a.shape[1:])


def cut_subsets(s: Subsets, k: int, batch: tuple[int, ...], cap: int) -> Subsets:
    """The first ``k`` subsets of ``s`` with ``cap`` slots, in the batch shape ``batch``."""
    return Subsets(
        x=cut(s.x, k, batch, cap),
        y=cut(s.y, k, batch, cap),
        mask=cut(s.mask, k, batch, cap),
        start=cut(s.start, k, batch, None),
        count=cut(s.count, k, batch, None),
    )


def check_broadcast(lo: Key, hi: Key, func: str) -> None:
    """``lo`` and ``hi`` (resolved keys, concrete or traced) broadcast to one batch shape."""
    try:
        np.broadcast_shapes(np.shape(lo[0]), np.shape(hi[0]))
    except ValueError:
        raise ValueError(
            f"{func}: `lo` and `hi` must broadcast to one batch shape, got shapes "
            f"{np.shape(lo[0])} and {np.shape(hi[0])}"
        ) from None


def cut_ranges(r: Any, batch: tuple[int, ...]) -> Ranges:
    """The first ``prod(batch)`` of padded ``(start, count)``, on the host, as ``Ranges``."""
    k = int(np.prod(batch))
    start, count = (np.asarray(a).reshape(-1)[:k].reshape(batch) for a in r)
    return Ranges(jax.device_put(start), jax.device_put(count))  # no program per shape
