"""Order statistics of :class:`jaxsubset.Subsets`: first, last, min, max, median, quantile,
argmin, argmax."""

import jax.numpy as jnp
import numpy as np

from .._core import Array, Int, Shaped, reduce_extreme
from ..reduce import extreme_statistic, lerp, rank
from ._base import SubsetBase, one_program


class OrderStatistics(SubsetBase):
    """The statistics read from the ordered or positioned values of each subset."""

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
        # one pass of its own: the variadic reduction of the extreme and "any NaN" side by
        # side (NaN kept as NumPy), as fast as XLA's plain extreme; no branch on the moments'
        # first sum, so the extreme does not wait for (or, alone, compute) a sum
        fill = jnp.inf if which == "min" else -jnp.inf
        y, mask, ax = sub._float_y(), sub._point_mask(), sub._axis
        ext = reduce_extreme(jnp.where(mask, y, fill), ax, which)
        return extreme_statistic(sub._held(), ext)

    def _nan_extreme(self, which: str, m: Array, n: Array) -> Array:
        clean, poisoned = self._clean(m)
        fill = jnp.inf if which == "min" else -jnp.inf
        masked = jnp.where(clean, self._float_y(), fill)
        ext = reduce_extreme(masked, self._axis, which)
        return extreme_statistic(n, ext, poisoned)

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
