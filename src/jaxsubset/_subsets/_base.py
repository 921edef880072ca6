"""The fields, shape and masks every ``Subsets`` reduction builds on (:class:`SubsetBase`).

The statistics are methods of :class:`jaxsubset.Subsets`, written in one module per family
(``_subset_moments``, ``_subset_order``, ``_subset_pairs``) on this base; each is one jitted
program when called eagerly (:func:`one_program`).
"""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Self

import jax
import jax.numpy as jnp
from jax import lax

from .._core import Array, Bool, Int, Shaped, centre, check_nan_policy, eager
from ..reduce import mean_statistic


# Eager calls of a reduction run as ONE jitted program per reduction, static arguments and
# shapes, instead of op by op (a dozen small programs to compile per new shape). Under a
# transformation (traced fields) the method runs as written, inside the caller's program;
# nan_policy="raise" stays eager (its check reads the values on the host at once).
REDUCTIONS: dict[str, Callable[..., Any]] = {}


def one_program(method: Callable[..., Any]) -> Callable[..., Any]:
    name = method.__name__
    REDUCTIONS[name] = method

    @functools.wraps(method)
    def reduction(self: "SubsetBase", *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("nan_policy") == "raise" or not eager(self):
            return method(self, *args, **kwargs)
        key = (args, tuple(sorted(kwargs.items())))
        try:
            hash(key)
        except TypeError:  # an array argument (e.g. q): not a static one
            return method(self, *args, **kwargs)
        return _eager_reduction(self, name, *key)

    return reduction


@functools.partial(jax.jit, static_argnames=("name", "args", "kwargs"))
def _eager_reduction(s: "SubsetBase", name: str, args: tuple, kwargs: tuple) -> Any:
    return REDUCTIONS[name](s, *args, **dict(kwargs))


@dataclasses.dataclass(frozen=True)
class SubsetBase:
    """The arrays of K padded subsets and the masks and counts their reductions read.

    :class:`jaxsubset.Subsets` documents the fields; this base holds no statistic.
    """

    x: Shaped[Array, "*batch L"]
    y: Shaped[Array, "..."]
    mask: Bool[Array, "*batch L"]
    start: Int[Array, "*batch"]
    count: Int[Array, "*batch"]
    # static: ``y`` is a reshaped view of the data (``chunks``), so reading one slot of every
    # subset costs no pass of its own; the sums then share the variance's pass about each
    # subset's first value (``_reduce.centre``). Elsewhere (rows read by a gather, whose one
    # column XLA would write out in full) they sum directly. Either way the same values to
    # the rounding of a sum; only which of two exact formulas runs.
    _view: bool = dataclasses.field(default=False, repr=False, metadata=dict(static=True))

    # ------------------------------------------------------------------ shape information
    @property
    def capacity(self) -> int:
        """The static capacity ``L``: how many points each subset can hold."""
        return self.mask.shape[-1]

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape of the batch of subsets, ``()`` for a single subset."""
        return tuple(self.count.shape)

    @property
    def overflow(self) -> Bool[Array, "*batch"]:
        """``(*batch)`` bool: True where a subset has more points than the capacity holds."""
        return self.count > self.capacity

    @property
    def n_held(self) -> Int[Array, "*batch"]:
        """``(*batch)`` int: points actually held, ``minimum(count, capacity)``."""
        return jnp.minimum(self.count, self.capacity)

    # ------------------------------------------------------------------ helpers
    @property
    def _axis(self) -> int:
        return self.count.ndim

    def _point_mask(self) -> Array:
        """``mask`` broadcastable against ``y`` (trailing channel axes of size 1)."""
        return self.mask.reshape(self.mask.shape + (1,) * (self.y.ndim - self.mask.ndim))

    def _per_channel(self, a: Array) -> Array:
        """Broadcast a ``(*batch)`` array against per-subset results ``(*batch, *channels)``."""
        return a.reshape(a.shape + (1,) * (self.y.ndim - self.mask.ndim))

    def _float_y(self) -> Array:
        """``y`` in the dtype reductions compute in: float32 for float16/bfloat16, the default
        float for integers and bools (results then come in that dtype)."""
        y = self.y
        if not jnp.issubdtype(y.dtype, jnp.inexact):
            y = y.astype(jnp.result_type(float))
        elif jnp.finfo(y.dtype).bits < 32:
            y = y.astype(jnp.float32)
        return y

    def _nan(self) -> Array:
        """``(*batch, L, *channels)`` bool: held values that are NaN."""
        if not jnp.issubdtype(self.y.dtype, jnp.inexact):
            return jnp.zeros(self.y.shape, bool)
        return self._point_mask() & jnp.isnan(self.y)

    def _values_mask(self, nan_policy: str, func: str) -> tuple[Array, Array]:
        """Element mask ``(*batch, L, *channels)`` and per-channel counts for a NaN policy."""
        nan_policy = check_nan_policy(nan_policy, func)
        if nan_policy == "raise":  # the mask and counts carry the check (see _raise_on_nan)
            return self._raise_on_nan(func)._values_mask("propagate", func)
        if nan_policy == "omit":
            m = self._point_mask() & ~self._nan()
            return m, jnp.sum(m, axis=self._axis)
        m = jnp.broadcast_to(self._point_mask(), self.y.shape)
        return m, jnp.broadcast_to(
            self._per_channel(self.n_held),
            self.y.shape[: self._axis] + self.y.shape[self._axis + 1 :],
        )

    def _raise_on_nan(self, func: str) -> Self:
        """``self`` guarded by the ``nan_policy="raise"`` check; use the result.

        Eagerly a held NaN raises ``ValueError`` at once; traced, the check lives in the
        returned pytree's arrays and costs only ``any(NaN held)`` until it fires (the count is
        taken on the host then; see :func:`jaxsubset._core._checks.error_if`).
        """
        from .._core import error_if

        nan = self._nan()
        return error_if(
            self,
            jnp.any(nan),
            lambda held: (
                f"{func}: the subsets hold {int(held.sum())} NaN value(s) and "
                "nan_policy='raise'; use nan_policy='omit' to skip missing readings"
            ),
            nan,
        )

    @one_program
    def valid_count(self) -> Int[Array, "..."]:
        """Number of held points whose ``y`` is not NaN, per channel.

        Beside ``count`` (all points of the subset) this is the number of real readings that a
        reduction with ``nan_policy="omit"`` uses.

        Returns:
            ``(*batch, *channels)`` int.

        Example:
            >>> import jax.numpy as jnp, jaxsubset
            >>> y = jnp.array([1.0, jnp.nan, 3.0, 4.0])
            >>> s = jaxsubset.chunks(jnp.arange(4.0), y, 2)
            >>> s.count.tolist(), s.valid_count().tolist()
            ([2, 2], [1, 2])
        """
        return jnp.sum(self._point_mask() & ~self._nan(), axis=self._axis).astype(self.count.dtype)

    def _propagating(self, nan_policy: str, func: str) -> Self | None:
        """``self`` where NaN propagates (``"raise"``: guarded by its check), None to omit NaN."""
        nan_policy = check_nan_policy(nan_policy, func)
        if nan_policy == "omit":
            return None
        return self._raise_on_nan(func) if nan_policy == "raise" else self

    def _centre(self) -> tuple[Array, Array, Array, Array]:
        """``(n, c, s1, ok)`` of the held points, NaN kept (:func:`jaxsubset._reduce.centre`):
        the points held, the shift (one of each subset's values), ``sum(y - c)``, and whether it
        is finite (no NaN or inf held); each ``(*batch, *channels)``."""
        c, s1, ok = centre(self._float_y(), self._point_mask(), self._axis)
        return self._held(), c, s1, ok

    def _total(self) -> Array:
        """The sums of the held values, NaN and inf propagating through the sum itself."""
        return jnp.sum(jnp.where(self._point_mask(), self._float_y(), 0), axis=self._axis)

    def _held(self) -> Array:
        """``(*batch, *channels)`` int: the points held, per channel."""
        y, ax = self.y, self._axis
        return jnp.broadcast_to(self._per_channel(self.n_held), y.shape[:ax] + y.shape[ax + 1 :])

    def _clean(self, m: Array) -> tuple[Array, Array]:
        """The mask without NaN, and where a NaN is held under ``m`` (``(*batch, *channels)``).

        Reductions compute from the NaN-free values and put NaN where a NaN is held: no NaN
        ever enters the arithmetic, so none reaches a gradient through a zero cotangent.
        """
        nan = m & self._nan()
        return m & ~nan, jnp.any(nan, axis=self._axis)

    def _mean(self, m: Array, n: Array) -> Array:
        y = self._float_y()
        clean, poisoned = self._clean(m)
        total = jnp.sum(jnp.where(clean, y, 0), axis=self._axis)
        return mean_statistic(n, total, poisoned)

    def _about_own_value(self, y: Array, finite: Array) -> Array:
        """``y - shift`` where ``finite`` (else 0), ``shift`` a value of each subset's own.

        The shift is the subset's first finite value (no gradient: the moments do not depend
        on it), so a constant subset's deviations are exactly 0 and a large offset costs no
        digits. Needs ``capacity > 0``.
        """
        ax = self._axis
        first = jnp.argmax(finite, axis=ax, keepdims=True)
        shift = lax.stop_gradient(jnp.take_along_axis(jnp.where(finite, y, 0), first, axis=ax))
        return jnp.where(finite, y - shift, 0)
