"""The :class:`Ranges` type: contiguous index ranges ``(start, count)``, what every subset
request resolves to, and the one traced gather of them into :class:`Subsets`."""

import dataclasses
import functools
from typing import ClassVar

import jax
import jax.numpy as jnp

from .._core import (
    Array,
    ArrayLike,
    Int,
    as_int_bounds,
    index_dtype,
    now_or_traced,
)
from .._subsets import Subsets, gather_padded


@functools.partial(jax.tree_util.register_dataclass)
@dataclasses.dataclass(frozen=True)
class Ranges:
    """Contiguous index ranges ``[start, start + count)``: what every subset request reduces to.

    The functions of :mod:`jaxsubset.ranges` return it; :func:`jaxsubset.gather` turns it into
    padded :class:`Subsets`, and the O(N) statistics consume it without padding.

    Attributes:
        start: ``(*batch)`` int, first index of each range, in ``[0, N]``.
        count: ``(*batch)`` int, number of points of each range (``start + count <= N``).
        max_count: static Python int or None: an upper bound on every ``count`` known without
            looking at data (chunks, sliding windows), used as the default capacity.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> r = jaxsubset.ranges.chunks(jnp.arange(7.0), 3)
        >>> r.start.tolist(), r.count.tolist(), r.max_count
        ([0, 3, 5], [3, 2, 2], 3)
    """

    start: Int[Array, "*batch"]
    count: Int[Array, "*batch"]
    max_count: int | None = dataclasses.field(default=None, metadata=dict(static=True))

    # Not a field (so not part of the pytree: jit, vmap and the treedef are unaffected): set by
    # ``ranges.chunks`` without a traced ``length`` on the object it returns, the static layout
    # ``(n1, s1, n2, s2)`` of its consecutive pieces (``n1`` of ``s1`` points, then ``n2`` of
    # ``s2``). The padded road then reduces the pieces as reshaped ``(K, L)`` blocks instead of
    # gathering them (:func:`pieces_of`). An object rebuilt by a transformation has none and
    # gathers: the same values.
    _pieces: ClassVar[tuple[int, int, int, int] | None] = None

    @property
    def stop(self) -> Int[Array, "*batch"]:
        """``(*batch)`` int, one past the last index of each range."""
        return self.start + self.count

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape of the batch of ranges, ``()`` for a single range."""
        return tuple(self.count.shape)


def with_pieces(r: Ranges, layout: tuple[int, int, int, int]) -> Ranges:
    """``r`` carrying the static layout of its consecutive pieces (see ``Ranges._pieces``).

    Only a layout of non-empty pieces is attached (``s1 >= 1``, and ``s2 >= 1`` where
    ``n2 > 0``): empty pieces are left to the gather.
    """
    n1, s1, n2, s2 = layout
    if s1 >= 1 and (n2 == 0 or s2 >= 1) and 0 < n1 + n2 == r.count.size == r.count.shape[-1]:
        object.__setattr__(r, "_pieces", (int(n1), int(s1), int(n2), int(s2)))
    return r


def pieces_of(r: Ranges) -> tuple[int, int, int, int] | None:
    """The static piece layout :func:`with_pieces` attached to ``r``, or None."""
    return r._pieces


def real_length(length: ArrayLike | None, n: int, func: str) -> Array:
    """The number of real points: ``len(x)`` or the traced ``length`` clipped to it."""
    if length is None:
        return jnp.asarray(n, index_dtype())
    length = as_int_bounds(length, "length", func)
    if length.ndim != 0:
        raise ValueError(f"{func}: `length` must be a scalar, got shape {tuple(length.shape)}")

    def now(length: Array) -> None:
        if not 0 <= int(length) <= n:
            raise ValueError(f"{func}: `length` must be in [0, len(x)={n}], got {int(length)}")

    now_or_traced(length, now)
    return jnp.clip(length.astype(index_dtype()), 0, n)


def to_subsets(x: Array, y: Array, r: Ranges, capacity: int) -> Subsets:
    return gather_padded(x, y, r.start, r.count, capacity)
