"""Reductions with a fixed meaning whatever the backend and program: NaN-keeping min/max, and
float sums in one fixed order.

On the CPU backend of jax 0.10 a jitted ``jnp.max``/``jnp.min`` (or ``lax.reduce`` with
``max``/``min``) over an axis longer than a few dozen elements drops NaN (the vectorised
reduction keeps the other operand), while elementwise ``jnp.maximum``/``jnp.minimum`` and
scatter-max/min keep it. Every NaN-propagating reduction of the library goes through here.

XLA's own ``reduce`` adds in an order it picks per shape and program (how it vectorises and
splits the loop), so the same values summed in two programs (eager and under ``jit``, 7 or 64
ranges) may differ in their last bits. :func:`ordered_sum` adds in one order fixed by the
length alone: the padded reductions give the same bits wherever the same values are summed.
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


def ordered_sum(a: Array, axis: int) -> Array:
    """The sum of ``a`` over ``axis`` in one fixed pairwise order (bit-stable, any backend).

    The axis is padded with zeros to a power of two and folded in half, ``a[:h] + a[h:]``,
    until one entry is left: elementwise additions, which XLA never reorders, so the result's
    bits depend only on the values and the length, not on the program or the shapes around
    it (unlike ``jnp.sum``). Pairwise, the rounding error grows with ``log2`` of the length.

    Args:
        a: an array (integers and bools, whose sums are exact in any order, go to
            ``jnp.sum``).
        axis: the axis to sum over.

    Returns:
        ``a`` summed over ``axis`` (that axis removed); 0 for an empty axis.

    Example:
        >>> import jax.numpy as jnp
        >>> ordered_sum(jnp.array([[1.0, 2.0, 3.0], [0.5, -0.5, 1e-3]]), 1).tolist()
        [6.0, 0.001]
    """
    axis = axis % a.ndim
    n = a.shape[axis]
    if n == 0 or not jnp.issubdtype(a.dtype, jnp.inexact):
        return jnp.sum(a, axis=axis)
    size = 1 << (n - 1).bit_length()
    if size > n:
        widths = [(0, 0)] * a.ndim
        widths[axis] = (0, size - n)
        a = jnp.pad(a, widths)
    while a.shape[axis] > 1:
        h = a.shape[axis] // 2
        a = lax.slice_in_dim(a, 0, h, axis=axis) + lax.slice_in_dim(a, h, 2 * h, axis=axis)
    return jnp.squeeze(a, axis)
