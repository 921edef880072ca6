"""``_core.blocked_scan``: the inclusive scan under an associative merge that the EWM road runs
(its program holds two merges per level of ``block``-element rows, not two per level of a
tree), against NumPy's cumulative operations and a serial loop: lengths around the row
boundaries, another axis, pytrees, a merge that does not commute, ``jit``/``vmap``/``grad``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsubset._core import blocked_scan
from references import FLOAT, tol


def _close(got, want):
    """Within the rounding of a sum of len(want) terms (sums near zero cancel)."""
    want = np.asarray(want, np.float64)
    atol = want.shape[0] * np.finfo(FLOAT).eps * (np.abs(want).max() if want.size else 1.0)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol(FLOAT)["rtol"],
                               atol=atol)  # fmt: skip


def _affine(a, b):  # x -> a0 x + a1, then b: not commutative
    return a[0] * b[0], b[0] * a[1] + b[1]


def _serial_affine(m, c):
    out, s = [], 0.0
    for mi, ci in zip(m, c, strict=True):
        s = mi * s + ci
        out.append(s)
    return np.asarray(out)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 8, 9, 17, 26])
def test_lengths_around_the_rows_equal_numpy(n):
    """block = 3: one row, several rows, a padded last row and three levels of rows."""
    rng = np.random.default_rng(n)
    v = rng.normal(size=(n, 2)).astype(FLOAT)
    pad = (jnp.zeros(2, FLOAT), jnp.full(2, -jnp.inf, FLOAT))
    s, m = blocked_scan(lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (v, v), pad,
                        block=3)  # fmt: skip
    _close(s, np.cumsum(v, axis=0))
    np.testing.assert_array_equal(np.asarray(m), np.maximum.accumulate(v, axis=0))
    mul = rng.uniform(0.5, 1.5, n).astype(FLOAT)
    got = blocked_scan(_affine, (mul, v[:, 0]), (FLOAT(1), FLOAT(0)), block=3)[1]
    _close(got, _serial_affine(mul, v[:, 0]))


def test_another_axis_jit_vmap_grad_and_a_bounded_program():
    rng = np.random.default_rng(7)
    v = jnp.asarray(rng.normal(size=(3, 300, 2)).astype(FLOAT))

    def cumsum(v):
        return blocked_scan(jnp.add, v, jnp.zeros((3, 2), FLOAT), axis=1, block=8)

    want = np.cumsum(np.asarray(v), axis=1)
    _close(np.moveaxis(np.asarray(jax.jit(cumsum)(v)), 1, 0), np.moveaxis(want, 1, 0))
    one = lambda w: blocked_scan(jnp.add, w, jnp.zeros(2, FLOAT), block=8)  # noqa: E731
    _close(np.moveaxis(np.asarray(jax.vmap(one)(v)), 1, 0), np.moveaxis(want, 1, 0))
    g = jax.grad(lambda w: jnp.sum(jnp.sin(cumsum(w))))(v)
    g_ref = jax.grad(lambda w: jnp.sum(jnp.sin(jnp.cumsum(w, axis=1))))(v)
    _close(np.moveaxis(np.asarray(g), 1, 0), np.moveaxis(np.asarray(g_ref), 1, 0))
    # the program: two scans per level of rows (300 -> 38 -> 5 rows of 8) and one for the
    # last, whatever the length: not one merge per level of a tree
    jaxpr = jax.make_jaxpr(cumsum)(v)
    scans = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scan"]
    assert len(scans) == 5
