"""The sliding road's folds: each fold of ``reduce``'s with its sub-block prefix and suffix.

The combinations and identities are ``jaxsubset.reduce``'s folds (one definition for every
road, named by the statistic table); what is added here is how a sub-block of ``block``
partials is folded from either end (a 0/1 triangular matmul or a cumulative sum for sums,
cumulative extremes, unrolled Chan combinations for moments), which :mod:`._sliding` builds
every window from.
"""

import jax
import jax.numpy as jnp
from jax import lax

from ..reduce import Extreme, Fold, Moments, Pairs, Sum, backend


def tmap(f, *ps):
    return jax.tree_util.tree_map(f, *ps)


class SlidingFold(Fold):
    """A fold (``jaxsubset.reduce``'s) with its sub-block prefix/suffix folds and sub-block size."""

    block = 4

    def presuf(self, r):  # pragma: no cover - interface
        """Inclusive prefix and suffix folds along axis 1 of ``(R, b, C)`` partials."""
        raise NotImplementedError

    def next(self) -> "SlidingFold":
        """The fold of the sub-block totals (the recursion's level)."""
        return self


class SlidingSum(Sum, SlidingFold):
    block = 16

    def presuf(self, r):
        return self.scan(r, False), self.scan(r, True)

    def scan(self, r, reverse: bool):
        """The inclusive prefix (suffix with ``reverse``) sums along axis 1 of ``(R, b, C)``."""
        if backend() == "cpu" and jnp.issubdtype(r.dtype, jnp.floating):
            # a 0/1 triangular matmul in full precision: each output a sum of the sub-block's
            # own points (CPU only: elsewhere f32 dots may run in TF32). The points of a
            # sub-block are made the last axis (a bitcast for one channel).
            rows, b, ch = r.shape
            low = jnp.tril(jnp.ones((b, b), r.dtype))  # low[k, l] = l <= k
            x = jnp.moveaxis(r, 1, 2).reshape(rows * ch, b)
            tri = low if reverse else low.T  # x @ low.T: prefix; x @ low: suffix
            out = jnp.matmul(x, tri, precision=lax.Precision.HIGHEST).reshape(rows, ch, b)
            return jnp.moveaxis(out, 2, 1)
        return lax.cumsum(r, axis=1, reverse=reverse)


class SlidingExtreme(Extreme, SlidingFold):
    block = 4

    def __init__(self, which: str):
        super().__init__(which)
        self.cum = lax.cummin if which == "min" else lax.cummax

    def presuf(self, r):
        x = jnp.moveaxis(r, 1, 2)  # the sub-block's points the last axis
        pre, suf = self.cum(x, axis=2), self.cum(x, axis=2, reverse=True)
        return jnp.moveaxis(pre, 2, 1), jnp.moveaxis(suf, 2, 1)


class SlidingMoments(Moments, SlidingFold):
    """``(n, c, m, M2)`` partials (mean ``c + m``, ``c`` one of the partial's points)."""

    block = 4

    def presuf(self, r):
        # b - 1 combinations each way, unrolled: a smaller program than a parallel scan
        cols = [tmap(lambda a, k=k: a[:, k], r) for k in range(r[0].shape[1])]
        pre = [cols[0]]
        for col in cols[1:]:
            pre.append(self.combine(pre[-1], col))
        suf = [cols[-1]]
        for col in cols[-2::-1]:
            suf.append(self.combine(col, suf[-1]))
        suf = suf[::-1]
        return tmap(lambda *a: jnp.stack(a, 1), *pre), tmap(lambda *a: jnp.stack(a, 1), *suf)


class ShiftedMoments(SlidingMoments):
    """Moments whose sub-block prefix/suffix are sums around one point of each piece.

    Partials are ``(n, c, m, M2)`` (a point: ``(1, y, 0, 0)``). A prefix piece is summed
    around the shift ``c0`` of the first non-empty partial of its sub-block, a suffix piece
    around that of the last one: a point of the piece whenever the piece counts any point.
    With ``d = (c - c0) + m`` per partial, ``S1 = sum(n d)`` and ``S2 = sum(M2 + n d**2)``
    are sub-block sums (a matmul on the CPU), and the piece is ``(n, c0, S1 / n,
    S2 - S1**2 / n)``. Every level of the recursion uses the same fold.
    """

    block = 16

    def presuf(self, r):
        n, c, m, q = r
        fdt = m.dtype
        b = m.shape[1]
        ok = n > 0
        pos = jnp.arange(b)[None, :, None]
        first = jnp.min(jnp.where(ok, pos, b), axis=1, keepdims=True)
        last = jnp.max(jnp.where(ok, pos, -1), axis=1, keepdims=True)
        c_pre = jnp.take_along_axis(c, jnp.clip(first, 0, b - 1), axis=1)
        c_suf = jnp.take_along_axis(c, jnp.clip(last, 0, b - 1), axis=1)
        nf = n.astype(fdt)
        # a deviation or square beyond the float range is clamped to it (a matmul's 0 * inf
        # would reach the pieces without that point); the pieces holding it get M2 = inf
        big = jnp.finfo(fdt).max
        s = SlidingSum()
        pn, sn = s.presuf(nf)

        def sums(ref, which):
            d = jnp.clip(jnp.where(ok, (c - ref) + m, 0), -big, big)
            s2 = jnp.minimum(jnp.where(ok, q, 0) + nf * jnp.minimum(d * d, big), big)
            return s.scan(nf * d, which), s.scan(s2, which)

        p1, p2 = sums(c_pre, False)
        s1, s2 = sums(c_suf, True)

        def moments(cnt, s1, s2, c0):
            safe = jnp.where(cnt > 0, cnt, 1)
            mean = s1 / safe
            m2 = jnp.where(s2 >= big, jnp.inf, jnp.maximum(s2 - s1 * mean, 0))
            return cnt.round().astype(n.dtype), jnp.broadcast_to(c0, s1.shape), mean, m2

        return moments(pn, p1, p2, c_pre), moments(sn, s1, s2, c_suf)


class SlidingPairs(Pairs, SlidingMoments):
    """Channel-pair co-moment partials (:mod:`._pairs`) with the moments' sub-block folds."""


def shift(p, d: int, fold: SlidingFold):
    """``p`` moved down ``d`` rows along axis 0, identities entering at the top."""

    def one(a, e):
        if d == 0:
            return a
        if d >= a.shape[0]:
            return e
        return jnp.concatenate([e[:d], a[: a.shape[0] - d]], axis=0)

    return tmap(one, p, fold.identity_like(p))


class IntSum(SlidingSum):
    def scan(self, r, reverse: bool):
        return lax.cumsum(r, axis=1, reverse=reverse)
