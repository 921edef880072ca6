"""Sample skewness and excess kurtosis from central moments, as pandas and SciPy (bias=False).

Both the reference road (:class:`jaxsubset.Subsets`) and the block tree compute a subset's
central moments ``M2, M3, M4`` (sums of the 2nd/3rd/4th powers of the deviations from the
subset's mean) and finish here, so the conventions are written once:

- ``"skew"``: the adjusted Fisher-Pearson coefficient
  ``G1 = sqrt(n (n - 1)) / (n - 2) * sqrt(n) M3 / M2**1.5`` (pandas' ``skew()``,
  ``scipy.stats.skew(bias=False)``), NaN below 3 points;
- ``"kurt"``: the bias-corrected excess kurtosis
  ``G2 = (n - 1) / ((n - 2) (n - 3)) * ((n + 1) (n M4 / M2**2 - 3) + 6)`` (pandas' ``kurt()``,
  ``scipy.stats.kurtosis(bias=False)``), NaN below 4 points;
- NaN for a constant subset (``M2 == 0``: pandas 3 gives NaN there too; pandas' own test is
  ``variance <= 1e-14``, an absolute threshold this library does not copy, as it depends on
  the data's units), for a subset holding ``+-inf`` (as the variance), and where a moment or
  ``M2**1.5`` / ``M2**2`` overflows the float dtype (deviations beyond ~1e9 in float32 for
  the kurtosis): never a rounded garbage value.
"""

import jax.numpy as jnp

from .._core import Array


Moments = tuple[Array, Array, Array, Array]  # (n: int, c, m, M2): mean c + m, each (..., C)


# A partial is (n, c, m, M2): n points with mean c + m and squared deviations M2, where the
# shift c is one of the partial's own points. Two partials' means differ by
# (c_b - c_a) + (m_b - m_a): the first term a difference of two data values, exact when they
# are within a factor 2 (Sterbenz), so offsets like 1e8 + noise cost no digits.
def chan(a: Moments, b: Moments) -> Moments:
    """Chan et al.'s combination of two ``(n, c, m, M2)`` partials (either may be empty)."""
    na, ca, ma, qa = a
    nb, cb, mb, qb = b
    n = na + nb
    both = (na > 0) & (nb > 0)
    w = jnp.where(both, nb.astype(ma.dtype) / jnp.where(n > 0, n, 1).astype(ma.dtype), 0)
    d = jnp.where(both, (cb - ca) + (mb - ma), 0)
    c = jnp.where(na > 0, ca, cb)
    m = jnp.where(na > 0, ma + d * w, mb)
    q = qa + qb + d * d * na.astype(ma.dtype) * w
    return n, c, m, q


def shape_statistic(which: str, n: Array, m2: Array, m3: Array, m4: Array, bad: Array) -> Array:
    """``"skew"`` or ``"kurt"`` of subsets with ``n`` points and central moments ``m2..m4``.

    Args:
        which: ``"skew"`` or ``"kurt"``.
        n: int counts of the points the moments are made of.
        m2, m3, m4: float sums of the powers of the deviations from each subset's mean.
        bad: bool, True where the result must be NaN (a NaN held and not omitted, an inf).

    Returns:
        The statistic, NaN where undefined (see the module docstring); the gradient of a
        finite result is finite, and no NaN enters the arithmetic elsewhere.
    """
    fdt = m2.dtype
    need = 3 if which == "skew" else 4
    mk = m3 if which == "skew" else m4
    ok = ~bad & (n >= need) & (m2 > 0) & jnp.isfinite(m2) & jnp.isfinite(mk)
    nf = jnp.where(ok, n, need + 1).astype(fdt)
    s2 = jnp.where(ok, m2, 1)
    den = s2 * jnp.sqrt(s2) if which == "skew" else s2 * s2
    ok = ok & jnp.isfinite(den)
    den = jnp.where(ok, den, 1)
    mk = jnp.where(ok, mk, 0)
    if which == "skew":
        res = jnp.sqrt(nf * (nf - 1)) / (nf - 2) * (jnp.sqrt(nf) * mk / den)
    else:
        g2 = nf * mk / den - 3
        res = (nf - 1) / ((nf - 2) * (nf - 3)) * ((nf + 1) * g2 + 6)
    ok = ok & jnp.isfinite(res)
    return jnp.where(ok, res, jnp.nan)
