"""Min/max reductions that keep NaN, as NumPy's, whatever the backend does.

On the CPU backend of jax 0.10 a jitted ``jnp.max``/``jnp.min`` (or ``lax.reduce`` with
``max``/``min``) over an axis longer than a few dozen elements drops NaN (the vectorised
reduction keeps the other operand), while elementwise ``jnp.maximum``/``jnp.minimum`` and
scatter-max/min keep it. Every NaN-propagating reduction of the library goes through here.
"""

import functools

import jax
import jax.numpy as jnp
from jax import lax

from ._typing import Array


def reduce_extreme(a: Array, axis: int | tuple[int, ...], which: str) -> Array:
    """``jnp.min``/``jnp.max`` of ``a`` over ``axis``, NaN wherever a NaN is reduced.

    Args:
        a: any array.
        axis: the axis (or axes) to reduce.
        which: ``"min"`` or ``"max"``.

    Returns:
        ``a`` reduced over ``axis``; NaN where the reduced values hold a NaN (NumPy's rule).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> a = jnp.arange(200.0).at[7].set(jnp.nan).reshape(2, 100)
        >>> jax.jit(lambda a: reduce_extreme(a, 1, "max"))(a).tolist()
        [nan, 199.0]
    """
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return jnp.min(a, axis=axis) if which == "min" else jnp.max(a, axis=axis)
    axes = tuple(sorted(ax % a.ndim for ax in ((axis,) if isinstance(axis, int) else axis)))
    return nan_extreme(a, axes, which)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def nan_extreme(a: Array, axes: tuple[int, ...], which: str) -> Array:
    op = lax.min if which == "min" else lax.max
    ident = jnp.array(jnp.inf if which == "min" else -jnp.inf, a.dtype)
    # one variadic reduction: the extreme and "any NaN" side by side (measured as fast as the
    # plain max; a separate any(isnan) pass cost 3x). It has no derivative rule of its own.
    ext, has_nan = lax.reduce(
        (a, jnp.isnan(a)),
        (ident, jnp.array(False)),
        lambda x, y: (op(x[0], y[0]), x[1] | y[1]),
        axes,
    )
    return jnp.where(has_nan, jnp.array(jnp.nan, a.dtype), ext)


@nan_extreme.defjvp
def nan_extreme_jvp(
    axes: tuple[int, ...], which: str, primals: tuple[Array], tangents: tuple[Array]
) -> tuple[Array, Array]:
    (a,), (t,) = primals, tangents
    ext = nan_extreme(a, axes, which)
    # JAX's own rule (the tangent shared equally by the points at the extreme), with a safe
    # divisor: a reduction holding NaN has no point equal to its NaN result, and 0/0 there
    # would put NaN into the gradients of every other point through a zero cotangent
    at = a == jnp.expand_dims(ext, axes)
    hits = jnp.sum(at, axis=axes).astype(a.dtype)
    dt = jnp.sum(jnp.where(at, t, 0), axis=axes) / jnp.where(hits > 0, hits, 1)
    return ext, dt
