"""Reductions with a fixed meaning whatever the backend and program: NaN-keeping min/max, and
the moments of padded subsets in the form XLA reduces fastest.

On the CPU backend of jax 0.10 a jitted ``jnp.max``/``jnp.min`` (or ``lax.reduce`` with
``max``/``min``) over an axis longer than a few dozen elements drops NaN (the vectorised
reduction keeps the other operand), while elementwise ``jnp.maximum``/``jnp.minimum`` and
scatter-max/min keep it. Every NaN-propagating reduction of the library goes through here.

Sums are XLA's own ``reduce``, which adds in an order it picks per shape and program (how it
vectorises and splits the loop): the same values summed in two programs of other shapes (eager
and under ``jit``, 7 or 64 subsets) may differ in their last bits, never by more than the
rounding of a sum (a fixed pairwise order, the library's earlier choice, cost 1.3-22x
``jnp.sum`` on the CPU: BENCHMARKS.md, issue 29). The same subset in the same program gives the
same bits, and a subset's result depends only on its own points.

XLA's CPU backend reduces fastest when only arithmetic (no compare, no select) lies between
the data and the reduction: it then fuses the arithmetic into its vectorised reduction, where a
select or a NaN test costs a pass of its own that writes the whole array (5x a sum). The moments
of :func:`centre` are built that way: NaN and inf are found from the sums themselves, and only
the subsets' masks (constants XLA folds away for chunks and full windows) select.
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
    return ext, _share(a, t, ext, axes)


def centre(y: Array, mask: Array, axis: int) -> tuple[Array, Array, Array]:
    """``(c, s1, ok)`` of masked slots, NaN kept: one sum about one of each subset's values.

    The shift ``c`` is each subset's first slot where it is finite (its first held point; 0
    otherwise), without gradient; ``s1`` is the sum of ``y - c`` over the held slots and
    ``mean = c + s1 / n``: exactly ``c`` for a constant subset, and the mean of large offsets
    without the digits a plain sum loses. A held NaN or infinity (or ``y - c`` beyond the float
    range) makes ``s1`` non-finite: ``ok`` is False exactly there, found without a pass of its
    own. NaN propagates as in NumPy (``inf`` gives ``inf``, ``inf`` and ``-inf`` NaN).

    Args:
        y: ``(*batch, L, *channels)`` float values (padding slots: any finite value).
        mask: ``y``'s held slots, broadcastable against ``y`` (trailing axes of size 1).
        axis: the slot axis ``L``.

    Returns:
        ``c``, ``s1`` and ``ok``, each ``(*batch, *channels)``.
    """
    if y.shape[axis] == 0:
        zero = jnp.zeros(y.shape[:axis] + y.shape[axis + 1 :], y.dtype)
        return zero, zero, jnp.ones(zero.shape, bool)
    y0 = lax.index_in_dim(y, 0, axis=axis, keepdims=True)
    c = lax.stop_gradient(jnp.where(jnp.isfinite(y0), y0, 0))
    s1 = jnp.sum(jnp.where(mask, y - c, 0), axis=axis)
    return jnp.squeeze(c, axis), s1, jnp.isfinite(s1)


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
def squared_deviations(y: Array, mask: Array, mean: Array, ok: Array, axis: int) -> Array:
    """``sum((y - mean)**2)`` over the held slots: the second pass of a two-pass variance.

    ``mean`` and ``ok`` come from :func:`centre` (expanded at ``axis``); rows that are not
    ``ok`` (a NaN or inf held) give a value the caller replaces (NaN). Their derivative is 0,
    never NaN: the rule below selects, so a NaN held in one subset never reaches the gradient
    of another through a zero cotangent, while the value is pure arithmetic (XLA fuses it into
    its reduction).
    """
    dev = jnp.where(mask, y - jnp.where(ok, mean, 0), 0)
    return jnp.sum(dev * dev, axis=axis)


@squared_deviations.defjvp
def _squared_deviations_jvp(
    axis: int, primals: tuple[Array, ...], tangents: tuple[Array, ...]
) -> tuple[Array, Array]:
    y, mask, mean, ok = primals
    out = squared_deviations(y, mask, mean, ok, axis)
    # d/dy sum((y - m)**2) = 2 (y - m): the mean's own derivative contributes
    # -2 sum(y - m) dm = 0 (no gradient flows into ``mean``)
    dev = jnp.where(mask & ok, y - mean, 0)
    return out, jnp.sum(jnp.where(mask & ok, 2 * dev * tangents[0], 0), axis=axis)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def finite_extreme(a: Array, axis: int, which: str) -> Array:
    """``jnp.min``/``jnp.max`` over ``axis`` of values the caller knows hold no NaN.

    XLA's fastest reduction (on the CPU it may drop a NaN: see the module docstring), with
    :func:`nan_extreme`'s derivative (the tangent shared by the points at the extreme, a safe
    divisor), so no NaN reaches a gradient where a NaN is held anyway.
    """
    return jnp.min(a, axis=axis) if which == "min" else jnp.max(a, axis=axis)


@finite_extreme.defjvp
def _finite_extreme_jvp(
    axis: int, which: str, primals: tuple[Array], tangents: tuple[Array]
) -> tuple[Array, Array]:
    (a,), (t,) = primals, tangents
    ext = finite_extreme(a, axis, which)
    return ext, _share(a, t, ext, (axis,))


def _share(a: Array, t: Array, ext: Array, axes: tuple[int, ...]) -> Array:
    """JAX's tangent of an extreme: shared equally by the points at it, with a safe divisor
    (a reduction holding NaN has no point equal to its NaN result, and 0/0 there would put NaN
    into the gradients of every other point through a zero cotangent)."""
    at = a == jnp.expand_dims(ext, axes)
    hits = jnp.sum(at, axis=axes).astype(a.dtype)
    return jnp.sum(jnp.where(at, t, 0), axis=axes) / jnp.where(hits > 0, hits, 1)


def holds_nan(a: Array, axis: int) -> Array:
    """Whether ``a`` holds a NaN along ``axis``, by arithmetic XLA fuses into one reduction.

    ``1 / (1 + a**2)`` is finite for every number and 0 for ``+-inf`` (or a square beyond the
    float range), NaN only for NaN: its sum is NaN exactly where a NaN is held.
    """
    return jnp.isnan(jnp.sum(1 / (1 + a * a), axis=axis))
