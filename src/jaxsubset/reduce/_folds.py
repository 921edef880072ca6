"""The associative folds every road combines partials with: ONE definition per statistic family.

A fold says how two partials combine and what its identity is; the statistic table
(:mod:`._registry`: :func:`entry`) names each statistic's fold beside its finish. The roads
(one layer up, in :mod:`jaxsubset._statistics`) take them from there: the block tree
(``_tree``) folds ranges with them, the sliding road (``_sliding_folds``) adds its sub-block
prefix/suffix scans on top, and the label road (``_labels``) scatters points into their bins
with the same combination (``scatter``: the name of the ``.at[]`` update that applies
``combine`` elementwise) from the same identity (``ident``). Every partial holds only
its own points, so a combination of partials is a statistic of exactly their points (nothing
is subtracted).
"""

from typing import Any

import jax
import jax.numpy as jnp

from .._core import Array
from ._moments import chan
from ._pairs import combine as pair_combine


# ---------------------------------------------------------------------------- moments
# Chan's combination of (n, c, m, M2) partials is _moments.chan (shared with the pairs)
Partials4 = tuple[Array, Array, Array, Array, Array, Array]  # (n, c, m, M2, M3, M4)


def pebay(a: Partials4, b: Partials4) -> Partials4:
    """Pébay's pairwise combination of ``(n, c, m, M2, M3, M4)`` partials (either may be empty).

    The mean and ``M2`` are Chan's (:func:`chan`); with ``d`` the difference of the means
    (as there: a difference of two data values first) and ``w = nb / n``, ``v = na / n``:
    ``M3 = M3a + M3b + d**3 na w (v - w) + 3 d (v M2b - w M2a)`` and
    ``M4 = M4a + M4b + d**4 na w (v**2 - v w + w**2) + 6 d**2 (v**2 M2b + w**2 M2a)
    + 4 d (v M3b - w M3a)``. Every partial still holds only its own points.
    """
    na, ca, ma, qa, ra, sa = a
    nb, cb, mb, qb, rb, sb = b
    n, c, m, q = chan((na, ca, ma, qa), (nb, cb, mb, qb))
    dt = ma.dtype
    both = (na > 0) & (nb > 0)
    w = jnp.where(both, nb.astype(dt) / jnp.where(n > 0, n, 1).astype(dt), 0)
    v = 1 - w
    d = jnp.where(both, (cb - ca) + (mb - ma), 0)
    d2 = d * d
    naw = na.astype(dt) * w
    r = ra + rb + d2 * d * naw * (v - w) + 3 * d * (v * qb - w * qa)
    s = (
        sa
        + sb
        + d2 * d2 * naw * (v * v - v * w + w * w)
        + 6 * d2 * (v * v * qb + w * w * qa)
        + 4 * d * (v * rb - w * ra)
    )
    return n, c, m, q, r, s


class Fold:
    """One associative statistic: how its partials combine, and its identity.

    The elementwise folds (:class:`Sum`, :class:`Extreme`) also name their combination as an
    ``.at[]`` update (``scatter``) and their identity as a scalar (``ident``), which the label
    road scatters with; the folds of tuples of partials (moments, pairs) have neither.
    """

    scatter: str
    ident: Any

    def combine(self, a, b):  # pragma: no cover - interface
        raise NotImplementedError

    def identity_like(self, p):  # pragma: no cover - interface
        raise NotImplementedError


class Sum(Fold):
    """Sums (counts, sums of values)."""

    scatter = "add"
    ident = 0

    def combine(self, a, b):
        return a + b

    def identity_like(self, p):
        return jnp.zeros_like(p)


class Extreme(Fold):
    """The minimum or the maximum (``which``)."""

    def __init__(self, which: str):
        self.which = which
        self.scatter = which
        self.op = jnp.minimum if which == "min" else jnp.maximum
        self.ident = jnp.inf if which == "min" else -jnp.inf

    def combine(self, a, b):
        return self.op(a, b)

    def identity_like(self, p):
        return jnp.full_like(p, self.ident)


class Moments(Fold):
    """``(n, c, m, M2)`` partials combined by Chan's formula (mean ``c + m``, ``c`` a point)."""

    def combine(self, a, b):
        return chan(a, b)

    def identity_like(self, p):
        return jax.tree_util.tree_map(jnp.zeros_like, p)


class Moments4(Moments):
    """``(n, c, m, M2, M3, M4)`` partials combined by Pébay's formula."""

    def combine(self, a, b):
        return pebay(a, b)


class Pairs(Moments):
    """Channel-pair co-moment partials (:mod:`._pairs`), combined by Chan's formula."""

    def combine(self, a, b):
        return pair_combine(a, b)
