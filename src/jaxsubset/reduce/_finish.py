"""The finishes every road shares: a subset's statistic from its reduced partials, once.

Each road reduces its subsets its own way (a padded sum, a tree of folds, sliding blocks,
scatters into bins, a native kernel) into the same partials: ``n`` (the points counted),
``total`` (their sum), an extreme, ``M2`` (the sum of squared deviations from the mean). What
a statistic is, given those, is written here and nowhere else, with the conventions of the
table (:mod:`._registry`): an empty subset's mean, extreme and spread are NaN; ``bad`` (a NaN
held and not omitted, an infinite value where the statistic says so) makes a result NaN; no
NaN enters the arithmetic of a finite result (its gradient stays finite).
"""

import jax.numpy as jnp

from .._core import Array


def sum_statistic(total: Array, bad: Array | bool = False) -> Array:
    """``total`` (0 for an empty subset), NaN where ``bad``."""
    return jnp.where(bad, jnp.nan, total)


def mean_statistic(n: Array, total: Array, bad: Array | bool = False) -> Array:
    """``total / n``, NaN where ``n == 0`` or ``bad``."""
    safe = jnp.where(n > 0, n, 1).astype(total.dtype)
    return jnp.where(bad | (n == 0), jnp.nan, total / safe)


def extreme_statistic(n: Array, extreme: Array, bad: Array | bool = False) -> Array:
    """The minimum or maximum ``extreme`` of ``n`` points, NaN where ``n == 0`` or ``bad``."""
    return jnp.where(bad | (n == 0), jnp.nan, extreme)


def std_statistic(var: Array) -> Array:
    """``sqrt(var)``, exactly 0 (with a finite gradient) where the variance is 0, NaN where it
    is NaN."""
    pos = var > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, var, 1)), var)


def spread_statistics(
    stats: tuple[str, ...], n: Array, m2: Array, ddof: int, bad: Array
) -> dict[str, Array]:
    """``"var"``/``"std"``/``"sem"`` (those of ``stats``) from ``n`` points and their ``M2``.

    The conventions every road shares: ``M2 / (n - ddof)``, NaN where ``n - ddof <= 0`` or
    ``bad`` (a NaN held, an inf); ``std`` is exactly 0 where the variance is 0 (its gradient
    finite there); ``sem = std / sqrt(n)`` with the same ``ddof``.
    """
    fdt = m2.dtype
    denom = n - ddof
    var = jnp.where(bad | (denom <= 0), jnp.nan, m2 / jnp.where(denom > 0, denom, 1).astype(fdt))
    std = std_statistic(var)
    out = {"var": var, "std": std, "sem": std / jnp.sqrt(jnp.where(n > 0, n, 1).astype(fdt))}
    return {s: out[s] for s in ("var", "std", "sem") if s in stats}
