"""Min/max reductions that keep NaN, as NumPy's, whatever the backend does.

On the CPU backend of jax 0.10 a jitted ``jnp.max``/``jnp.min`` (or ``lax.reduce`` with
``max``/``min``) over an axis longer than a few dozen elements drops NaN (the vectorised
reduction keeps the other operand), while elementwise ``jnp.maximum``/``jnp.minimum`` and
scatter-max/min keep it. Every NaN-propagating reduction of the library goes through here.
"""

import jax.numpy as jnp

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
    ext = jnp.min(a, axis=axis) if which == "min" else jnp.max(a, axis=axis)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return ext
    return jnp.where(jnp.any(jnp.isnan(a), axis=axis), jnp.nan, ext)
