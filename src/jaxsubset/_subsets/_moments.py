"""Moments of :class:`jaxsubset.Subsets`: sum, mean, var, std, sem, skew, kurt."""

import jax.numpy as jnp

from .._core import Array, Shaped, squared_deviations, static_int
from ..reduce import shape_statistic, spread_statistics, std_statistic, sum_statistic
from ._base import SubsetBase, one_program


class Moments(SubsetBase):
    """The moment statistics, each two passes about one of the subset's own values."""

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
        return sum_statistic(total, poisoned)

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
            return spread_statistics(("var",), n, ss, ddof, ~ok)["var"]
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
        return spread_statistics(("var",), n, ss, ddof, poisoned)["var"]

    @one_program
    def std(self, ddof: int = 0, *, nan_policy: str = "propagate") -> Shaped[Array, "..."]:
        """Standard deviation of each subset's ``y``; NaN where ``n - ddof <= 0``.

        Args:
            ddof: delta degrees of freedom; the divisor is ``n - ddof``.
            nan_policy: ``"propagate"``, ``"omit"`` or ``"raise"`` (see :meth:`sum`).

        Returns:
            ``(*batch, *channels)`` float.
        """
        # sqrt'(0) is infinite: a constant subset's std is 0 with a zero gradient, so no NaN
        # reaches the gradients of other subsets through a zero cotangent (std_statistic)
        return std_statistic(self.var(ddof=ddof, nan_policy=nan_policy))

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

    def _shape(self, which: str, nan_policy: str) -> Array:
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
