"""The ``Subsets`` pytree: K subsets padded to one static capacity, and the gather building it."""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._reduce import centre, finite_extreme, holds_nan, reduce_extreme, squared_deviations
from ._statistics._median import lerp, rank
from ._trace import eager
from ._typing import Array, Bool, Int, Shaped
from ._validate import check_nan_policy, index_dtype, static_int


# Eager calls of a reduction run as ONE jitted program per reduction, static arguments and
# shapes, instead of op by op (a dozen small programs to compile per new shape). Under a
# transformation (traced fields) the method runs as written, inside the caller's program;
# nan_policy="raise" stays eager (its check reads the values on the host at once).
REDUCTIONS: dict[str, Callable[..., Any]] = {}


def one_program(method: Callable[..., Any]) -> Callable[..., Any]:
    name = method.__name__
    REDUCTIONS[name] = method

    @functools.wraps(method)
    def reduction(self: "Subsets", *args: Any, **kwargs: Any) -> Any:
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
def _eager_reduction(s: "Subsets", name: str, args: tuple, kwargs: tuple) -> Any:
    return REDUCTIONS[name](s, *args, **dict(kwargs))


@functools.partial(jax.tree_util.register_dataclass)
@dataclasses.dataclass(frozen=True)
class Subsets:
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

    def _raise_on_nan(self, func: str) -> "Subsets":
        """``self`` guarded by the ``nan_policy="raise"`` check; use the result.

        Eagerly a held NaN raises ``ValueError`` at once; traced, the check lives in the
        returned pytree's arrays and costs only ``any(NaN held)`` until it fires (the count is
        taken on the host then; see :func:`jaxsubset._checks.error_if`).
        """
        from ._checks import error_if

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

    # ------------------------------------------------------------------ reductions
    @one_program
    def sum(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Sum of each subset's ``y`` (float, also for integer ``y``); 0 for an empty subset.

        Args:
            nan_policy: SciPy's names: ``"propagate"`` (a NaN makes the result NaN),
                ``"omit"`` (NaN readings are skipped), ``"raise"`` (a NaN raises
                ``ValueError``; under ``jit`` at run time).

        Returns:
            ``(*batch, *channels)``.
        """
        sub = self._propagating(nan_policy, "Subsets.sum")
        if sub is not None:
            # the values themselves, also on a reshaped view: ``n * c + sum(y - c)`` about
            # the first value would round ``n * c`` (one outlier first: errors of n ulps of it)
            return sub._total()
        m, _ = self._values_mask(nan_policy, "Subsets.sum")
        clean, poisoned = self._clean(m)
        # integer y sums in the float dtype, as every statistics road: never an int32 wrap
        total = jnp.sum(jnp.where(clean, self._float_y(), 0), axis=self._axis)
        return jnp.where(poisoned, jnp.nan, total)

    @one_program
    def mean(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Mean of each subset's ``y``; NaN for an empty subset.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        sub = self._propagating(nan_policy, "Subsets.mean")
        if sub is not None:
            if sub._view:  # the variance's first pass, about each subset's first value
                n, c, total, _ = sub._centre()
            else:  # NaN and inf propagate through the sum itself
                n, total = sub._held(), sub._total()
                c = jnp.zeros((), total.dtype)
            safe = jnp.where(n > 0, n, 1).astype(total.dtype)
            return jnp.where(n > 0, c + total / safe, jnp.nan)
        return self._mean(*self._values_mask(nan_policy, "Subsets.mean"))

    def _propagating(self, nan_policy: str, func: str) -> "Subsets | None":
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
        mean = total / jnp.where(n > 0, n, 1).astype(y.dtype)
        return jnp.where(poisoned | (n <= 0), jnp.nan, mean)

    @one_program
    def var(self, ddof: int = 0, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Variance of each subset's ``y`` (two-pass, so a large offset loses no digits).

        Args:
            ddof: delta degrees of freedom; the divisor is ``n - ddof``.
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float; NaN where ``n - ddof <= 0`` and where a subset
            holds an infinite value (``inf - inf``, as NumPy); exactly 0 for a constant one.
        """
        ddof = static_int(ddof, "ddof", "Subsets.var", minimum=0)
        sub = self._propagating(nan_policy, "Subsets.var")
        if sub is not None and sub.capacity > 0:
            # two passes about the mean of one pass about one of the subset's own values
            # (``centre``): a constant subset's deviations are exactly 0, an offset costs no
            # digits, and a NaN or inf held shows in the first sum (NaN, as NumPy's inf - inf)
            n, c, s1, ok = sub._centre()
            y, ax = sub._float_y(), sub._axis
            mean = c + s1 / jnp.where(n > 0, n, 1).astype(y.dtype)
            ss = squared_deviations(
                y, sub._point_mask(), jnp.expand_dims(mean, ax), jnp.expand_dims(ok, ax), ax
            )
            denom = n - ddof
            var = ss / jnp.where(denom > 0, denom, 1).astype(y.dtype)
            return jnp.where(ok & (denom > 0), var, jnp.nan)
        m, n = self._values_mask(nan_policy, "Subsets.var")
        y = self._float_y()
        clean, poisoned = self._clean(m)
        # moments of the finite values; a subset holding +-inf has NaN variance (inf - inf,
        # as NumPy), set here rather than computed, so no inf or NaN enters the arithmetic
        finite = clean & jnp.isfinite(y)
        poisoned = poisoned | jnp.any(clean & ~finite, axis=self._axis)
        ax = self._axis
        n_f = jnp.sum(finite, axis=ax)
        safe_n = jnp.where(n_f > 0, n_f, 1).astype(y.dtype)
        if self.capacity == 0:
            ss = jnp.zeros(n_f.shape, y.dtype)
        else:
            z = self._about_own_value(y, finite)  # constant: exactly 0 however sums round
            mz = jnp.expand_dims(jnp.sum(z, axis=ax) / safe_n, ax)
            dev = jnp.where(finite, z - mz, 0)
            ss = jnp.sum(dev * dev, axis=ax)
        denom = n - ddof
        var = ss / jnp.where(denom > 0, denom, 1).astype(y.dtype)
        return jnp.where(poisoned | (denom <= 0), jnp.nan, var)

    @one_program
    def std(self, ddof: int = 0, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Standard deviation of each subset's ``y``; NaN where ``n - ddof <= 0``.

        Args:
            ddof: delta degrees of freedom; the divisor is ``n - ddof``.
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        var = self.var(ddof=ddof, nan_policy=nan_policy)
        # sqrt'(0) is infinite: a constant subset's std is 0 with a zero gradient, so no NaN
        # reaches the gradients of other subsets through a zero cotangent
        pos = var > 0
        return jnp.where(pos, jnp.sqrt(jnp.where(pos, var, 1)), var)

    @one_program
    def sem(self, ddof: int = 0, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Standard error of the mean, ``std(ddof) / sqrt(n)``; NaN where ``n - ddof <= 0``.

        ``ddof`` defaults to 0 as every statistic of the library; pandas' ``sem()`` and
        ``scipy.stats.sem`` use ``ddof=1``.

        Args:
            ddof: delta degrees of freedom of the standard deviation.
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        _, n = self._values_mask(nan_policy, "Subsets.sem")
        std = self.std(ddof=ddof, nan_policy=nan_policy)
        return std / jnp.sqrt(jnp.where(n > 0, n, 1).astype(std.dtype))

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

    def _shape(self, which: str, nan_policy: str) -> Array:
        from ._statistics._moments import shape_statistic

        m, n = self._values_mask(nan_policy, f"Subsets.{which}")
        y = self._float_y()
        if self.capacity == 0:
            return jnp.full(n.shape, jnp.nan, y.dtype)
        ax = self._axis
        clean, poisoned = self._clean(m)
        finite = clean & jnp.isfinite(y)
        poisoned = poisoned | jnp.any(clean & ~finite, axis=ax)
        z = self._about_own_value(y, finite)
        n_f = jnp.sum(finite, axis=ax)
        mz = jnp.expand_dims(jnp.sum(z, axis=ax), ax) / jnp.expand_dims(
            jnp.where(n_f > 0, n_f, 1).astype(y.dtype), ax
        )
        d = jnp.where(finite, z - mz, 0)
        d2 = d * d
        m2 = jnp.sum(d2, axis=ax)
        m3 = jnp.sum(d2 * d, axis=ax)
        m4 = jnp.sum(d2 * d2, axis=ax)
        return shape_statistic(which, n, m2, m3, m4, poisoned)

    @one_program
    def skew(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Sample skewness of each subset's ``y``, bias-corrected as pandas' ``skew()``.

        The adjusted Fisher-Pearson ``G1`` (``scipy.stats.skew(bias=False)``); NaN below 3
        points, for a constant subset, and where the subset holds an infinite value.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        return self._shape("skew", nan_policy)

    @one_program
    def kurt(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Sample excess kurtosis of each subset's ``y``, bias-corrected as pandas' ``kurt()``.

        ``G2`` (``scipy.stats.kurtosis(bias=False)``); NaN below 4 points, for a constant
        subset, and where the subset holds an infinite value.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        return self._shape("kurt", nan_policy)

    def _end(self, which: str, nan_policy: str) -> Array:
        m, n = self._values_mask(nan_policy, f"Subsets.{which}")
        y = self._float_y()
        ax = self._axis
        cap = self.capacity
        pos = jnp.arange(cap).reshape((cap,) + (1,) * (y.ndim - ax - 1))
        if which == "first":
            at = jnp.min(jnp.where(m, pos, cap), axis=ax, keepdims=True)
        else:
            at = jnp.max(jnp.where(m, pos, -1), axis=ax, keepdims=True)
        at = jnp.clip(at, 0, max(cap - 1, 0))
        if cap == 0:
            return jnp.full(n.shape, jnp.nan, y.dtype)
        clean = ~self._nan()
        val = jnp.take_along_axis(jnp.where(clean, y, 0), at, axis=ax).squeeze(ax)
        ok = jnp.take_along_axis(clean, at, axis=ax).squeeze(ax) & (n > 0)
        return jnp.where(ok, val, jnp.nan)

    @one_program
    def first(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """The first reading of each subset (in x order); NaN for an empty subset.

        With ``nan_policy="omit"`` the first non-NaN reading (pandas' groupby ``first()``);
        with ``"propagate"`` the first point, NaN if it is NaN (pandas' ``skipna=False``).

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float; the gradient reaches the point read.
        """
        return self._end("first", nan_policy)

    @one_program
    def last(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """The last reading of each subset (in x order); NaN for an empty subset.

        With ``nan_policy="omit"`` the last non-NaN reading (pandas' groupby ``last()``); with
        ``"propagate"`` the last point, NaN if it is NaN.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float; the gradient reaches the point read.
        """
        return self._end("last", nan_policy)

    def _extreme(self, which: str, nan_policy: str) -> Array:
        func = f"Subsets.{which}"
        sub = self._propagating(nan_policy, func)
        if sub is None or sub.capacity == 0:
            return self._nan_extreme(which, *self._values_mask(nan_policy, func))
        # XLA's fastest reduction where no subset holds a NaN (told by the first sum of the
        # mean, shared with it in one program); the NaN-keeping one only where one does
        n, _, _, ok = sub._centre()
        fill = jnp.inf if which == "min" else -jnp.inf
        y, mask, ax = sub._float_y(), sub._point_mask(), sub._axis
        fast = finite_extreme(jnp.where(mask, y, fill), ax, which)
        # the held values only (a view for chunks and full windows, whose masks fold away):
        # the branch reads no mask, which XLA would otherwise write out as a whole array
        held = jnp.where(mask, y, 0)

        def careful() -> Array:  # a NaN held: NaN; +-inf only: the fast extreme is right
            return jnp.where(ok | ~holds_nan(held, ax), fast, jnp.nan)

        ext = lax.cond(jnp.all(ok), lambda: fast, careful)
        return jnp.where(n <= 0, jnp.nan, ext)

    def _nan_extreme(self, which: str, m: Array, n: Array) -> Array:
        clean, poisoned = self._clean(m)
        fill = jnp.inf if which == "min" else -jnp.inf
        masked = jnp.where(clean, self._float_y(), fill)
        ext = reduce_extreme(masked, self._axis, which)
        return jnp.where(poisoned | (n <= 0), jnp.nan, ext)

    @one_program
    def min(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Minimum of each subset's ``y``; NaN for an empty subset.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        return self._extreme("min", nan_policy)

    @one_program
    def max(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Maximum of each subset's ``y``; NaN for an empty subset.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        return self._extreme("max", nan_policy)

    @one_program
    def median(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Median of each subset's ``y`` (mean of the two middle values for an even count).

        NaN for an empty subset, and (with ``nan_policy="propagate"``) NaN where the subset
        holds a NaN, as ``numpy.median``.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        m, n = self._values_mask(nan_policy, "Subsets.median")
        y = self._float_y()
        ordered = jnp.sort(jnp.where(m, y, jnp.inf), axis=self._axis)
        lo = jnp.expand_dims(jnp.maximum(n - 1, 0) // 2, self._axis)
        hi = jnp.expand_dims(n // 2, self._axis)
        a = jnp.take_along_axis(ordered, lo, axis=self._axis).squeeze(self._axis)
        b = jnp.take_along_axis(ordered, hi, axis=self._axis).squeeze(self._axis)
        med = (a + b) / 2
        has_nan = jnp.any(m & jnp.isnan(y), axis=self._axis)
        return jnp.where((n > 0) & ~has_nan, med, jnp.nan)

    @one_program
    def quantile(self, q: float, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """The ``q``-quantile of each subset's ``y``, as ``numpy.quantile`` (linear method).

        The value at rank ``h = (n - 1) q`` of the sorted values, interpolated linearly
        between ranks ``floor(h)`` and ``floor(h) + 1`` (NumPy's default ``"linear"``, pandas'
        ``quantile(interpolation="linear")``); ``q=0.5`` is :meth:`median`. NaN for an empty
        subset, (with ``"propagate"``) where the subset holds a NaN, and, as NumPy, where the
        interpolation reads an infinite value (``inf - inf``, also at ``t = 0``).

        Args:
            q: static float in ``[0, 1]``.
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float; the gradient reaches the one or two values read.
        """
        if isinstance(q, bool) or not isinstance(q, int | float | np.floating | np.integer):
            raise TypeError(f"Subsets.quantile: `q` must be a float in [0, 1], got {q!r}")
        q = float(q)
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"Subsets.quantile: `q` must be in [0, 1], got {q!r}")
        m, n = self._values_mask(nan_policy, "Subsets.quantile")
        y = self._float_y()
        ax = self._axis
        if self.capacity == 0:
            return jnp.full(n.shape, jnp.nan, y.dtype)
        clean, poisoned = self._clean(m)
        ordered = jnp.sort(jnp.where(clean, y, jnp.inf), axis=ax)
        # the rank in the float dtype of the values, as NumPy computes it in float64
        h = rank(n, q, y.dtype)
        lo = jnp.floor(h)
        t = h - lo
        lo_i = lo.astype(n.dtype)
        hi_i = jnp.minimum(lo_i + 1, jnp.maximum(n - 1, 0))
        a = jnp.take_along_axis(ordered, jnp.expand_dims(lo_i, ax), axis=ax).squeeze(ax)
        b = jnp.take_along_axis(ordered, jnp.expand_dims(hi_i, ax), axis=ax).squeeze(ax)
        val = lerp(a, b, t)  # NumPy's _lerp (so also its NaN where an end is +-inf)
        return jnp.where(poisoned | (n <= 0), jnp.nan, val)

    def _pair_stats(
        self, stats: tuple[str, ...], ddof: int, nan_policy: str, func: str
    ) -> dict[str, Array]:
        """``"cov"``/``"corr"`` of ``stats`` ``(*batch, C, C)`` and their point counts.

        Each channel pair ``(i, j)`` (``i <= j``) is reduced in two passes about a shift that
        is one of the pair's own points (its first counted one; no gradient: the moments do
        not depend on it), so a constant channel's deviations are exactly 0. The conventions
        are the registry's (:mod:`jaxsubset._statistics._pairs` finishes every road's).
        """
        from ._statistics._pairs import pair_statistics, pairs

        nan_policy = check_nan_policy(nan_policy, func)
        sub = self._raise_on_nan(func) if nan_policy == "raise" else self
        if sub.y.ndim != sub.mask.ndim + 1:
            raise ValueError(
                f"{func}: the covariance and correlation are between channels and need `y` of "
                f"shape (*batch, L, C), got {tuple(sub.y.shape)} for a mask of "
                f"{tuple(sub.mask.shape)}"
            )
        omit = nan_policy == "omit"
        y = sub._float_y()
        ax = sub._axis
        c = y.shape[-1]
        i, j = pairs(c)
        a, b = y[..., i], y[..., j]  # (*batch, L, P)
        held = sub.mask[..., None]
        fin = held & jnp.isfinite(a) & jnp.isfinite(b)
        nan = jnp.isnan(a) | jnp.isnan(b)
        bad = held & ~fin & ~nan if omit else held & ~fin
        n = jnp.sum(fin, axis=ax)
        safe = jnp.expand_dims(jnp.where(n > 0, n, 1).astype(y.dtype), ax)
        first = jnp.argmax(fin, axis=ax, keepdims=True) if sub.capacity else None

        def deviations(v: Array) -> Array:
            if first is None:
                return jnp.zeros(v.shape, v.dtype)
            shift = lax.stop_gradient(jnp.take_along_axis(jnp.where(fin, v, 0), first, axis=ax))
            z = jnp.where(fin, v - shift, 0)
            return jnp.where(fin, z - jnp.expand_dims(jnp.sum(z, axis=ax), ax) / safe, 0)

        da, db = deviations(a), deviations(b)
        zero = jnp.zeros(n.shape, y.dtype)
        parts = (n, zero, zero, zero, zero) + tuple(
            jnp.sum(v, axis=ax) for v in (da * db, da * da, db * db)
        )
        parts = parts + (jnp.sum(bad, axis=ax),)
        batch = n.shape[:-1]
        flat = tuple(v.reshape((-1, v.shape[-1])) for v in parts)
        out = pair_statistics(stats, flat, ddof, c)  # type: ignore[arg-type]
        return {k: v.reshape(batch + (c, c)) for k, v in out.items()}

    @one_program
    def cov(self, ddof: int = 0, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Covariance matrix of each subset's channels, as ``numpy.cov(rowvar=False)``.

        Entry ``[i, j]`` is the co-moment of channels ``i`` and ``j`` over the points where
        both count, divided by ``n - ddof``: with ``nan_policy="omit"`` the points where
        neither is NaN (pandas' pairwise-complete ``DataFrame.cov()``), with
        ``"propagate"`` every point (a NaN in either channel makes the entry NaN, as
        ``numpy.cov``). ``ddof`` defaults to 0 as :meth:`var` (``numpy.cov`` and pandas use
        1: pass ``ddof=1`` for their numbers); the diagonal is :meth:`var`.

        Args:
            ddof: delta degrees of freedom; NaN where ``n - ddof <= 0``.
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, C, C)`` float (``y`` must be ``(*batch, L, C)``); exactly 0 for a
            constant channel, NaN where an entry's points hold an infinite value.

        Example:
            >>> import jax.numpy as jnp, jaxsubset
            >>> y = jnp.array([[1.0, 2.0], [2.0, 4.0], [3.0, 7.0], [4.0, 0.0]])
            >>> s = jaxsubset.chunks(jnp.arange(4.0), y, 2)
            >>> s.cov(ddof=1)[0].tolist()
            [[0.5, 1.0], [1.0, 2.0]]
        """
        ddof = static_int(ddof, "ddof", "Subsets.cov", minimum=0)
        return self._pair_stats(("cov",), ddof, nan_policy, "Subsets.cov")["cov"]

    @one_program
    def corr(self, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Pearson correlation matrix of each subset's channels, as ``numpy.corrcoef``.

        The points of entry ``[i, j]`` as in :meth:`cov`; ``ddof`` cancels. Clipped to
        ``[-1, 1]`` (as ``numpy.corrcoef``), exactly 1 on the diagonal; NaN below 2 points,
        where either channel is constant (pandas' rolling ``corr``) and where an infinite
        value is held.

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, C, C)`` float (``y`` must be ``(*batch, L, C)``).

        Example:
            >>> import jax.numpy as jnp, jaxsubset
            >>> y = jnp.array([[1.0, 2.0], [2.0, 4.0], [3.0, 0.0], [4.0, 2.0]])
            >>> s = jaxsubset.chunks(jnp.arange(4.0), y, 2)
            >>> s.corr()[:, 0, 1].tolist()
            [1.0, 1.0]
        """
        return self._pair_stats(("corr",), 0, nan_policy, "Subsets.corr")["corr"]

    def _arg(self, which: str, nan_policy: str) -> Array:
        m, n = self._values_mask(nan_policy, f"Subsets.arg{which}")
        fill = jnp.inf if which == "min" else -jnp.inf
        masked = jnp.where(m, self._float_y(), fill)
        fn = jnp.argmin if which == "min" else jnp.argmax
        i = fn(masked, axis=self._axis).astype(self.start.dtype)
        return jnp.where(n > 0, self._per_channel(self.start) + i, -1)

    @one_program
    def argmin(self, *, nan_policy: str = "propagate") -> Int[Array, "..."]:
        """Index into the ORIGINAL arrays of each subset's minimum ``y`` (first on ties).

        With ``nan_policy="propagate"`` a NaN counts as the minimum (as ``numpy.argmin``).

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` int; -1 for an empty subset.
        """
        return self._arg("min", nan_policy)

    @one_program
    def argmax(self, *, nan_policy: str = "propagate") -> Int[Array, "..."]:
        """Index into the ORIGINAL arrays of each subset's maximum ``y`` (first on ties).

        With ``nan_policy="propagate"`` a NaN counts as the maximum (as ``numpy.argmax``).

        Args:
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` int; -1 for an empty subset.
        """
        return self._arg("max", nan_policy)

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
