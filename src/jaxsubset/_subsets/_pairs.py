"""Channel-pair statistics of :class:`jaxsubset.Subsets`: cov and corr."""

import jax.numpy as jnp
from jax import lax

from .._core import Array, Shaped, check_nan_policy, static_int
from ._base import SubsetBase, one_program


class PairStatistics(SubsetBase):
    """Covariance and correlation matrices between the channels of each subset."""

    def _pair_stats(
        self, stats: tuple[str, ...], ddof: int, nan_policy: str, func: str
    ) -> dict[str, Array]:
        """``"cov"``/``"corr"`` of ``stats`` ``(*batch, C, C)`` and their point counts.

        Each channel pair ``(i, j)`` (``i <= j``) is reduced in two passes about a shift that
        is one of the pair's own points (its first counted one; no gradient: the moments do
        not depend on it), so a constant channel's deviations are exactly 0. The conventions
        are the registry's (:mod:`jaxsubset.reduce._pairs` finishes every road's).
        """
        from ..reduce import pair_statistics, pairs

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
