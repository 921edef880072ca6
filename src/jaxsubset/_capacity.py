"""Capacity planning and opt-in runtime checks (overflow, sorted x) that work under ``jit``."""

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from ._core import Array, ArrayLike, as_x, concrete_only, error_if, next_power_of_two
from ._subsets import Subsets


def required_capacity(
    request: Callable[..., Subsets] | Subsets | ArrayLike, *args: Any, **kwargs: Any
) -> int:
    """The capacity a request needs, from concrete data, rounded up to a power of two.

    Rounding to powers of two means that changing data rarely changes the capacity, and so
    rarely recompiles. Call it eagerly (outside ``jit``), then pass the result as the static
    ``capacity`` of the jitted analysis.

    Args:
        request: a constructor (``jaxsubset.select``, ``rolling``, ``bins``, ...) followed by
            its arguments (``capacity`` is supplied here), or a :class:`Subsets`, or an array of
            true subset counts.
        *args: positional arguments of the constructor.
        **kwargs: keyword arguments of the constructor.

    Returns:
        A Python int, a power of two ``>=`` the largest subset (at least 1).

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(100.0)
        >>> jaxsubset.required_capacity(jaxsubset.select, x, x, 10.0, 15.5)
        8
        >>> jaxsubset.required_capacity(jnp.array([3, 17, 0]))
        32
    """
    if callable(request) and not isinstance(request, Subsets):
        if "capacity" in kwargs:
            raise TypeError("required_capacity: do not pass `capacity`; it is what is computed")
        request = request(*args, capacity=1, **kwargs)
    elif args or kwargs:
        raise TypeError("required_capacity: extra arguments are only taken with a constructor")
    counts = request.count if isinstance(request, Subsets) else request
    concrete_only(
        counts,
        "required_capacity: needs concrete data; call it outside `jit` and pass the result "
        "as the static `capacity`",
    )
    counts = np.asarray(counts)
    return next_power_of_two(int(counts.max()) if counts.size else 1)


def check_overflow(subsets: Subsets) -> Subsets:
    """Raise a clear error if any subset has more points than the capacity; works under ``jit``.

    Eagerly this raises ``ValueError`` at once. Traced, the check costs only ``any(overflow)``
    until it fires (the raising host callback sits in the failing branch of a ``lax.cond``);
    under ``vmap`` it is one check for the whole batch, and the message ends with
    ``(vmap: first failing batch index i)``. The check lives in the returned value: use it
    (``s = check_overflow(s)``), or the compiled program may drop the check with the unused
    value. Under a ``jit`` of your own JAX delivers the error as a
    ``jax.errors.JaxRuntimeError`` whose last line is ``ValueError: <message>``; wrap the call
    in ``jaxsubset.checked`` for the plain ``ValueError``. ``JAXSUBSET_CHECKS=off`` turns the
    check off.

    Args:
        subsets: the :class:`Subsets` to check.

    Returns:
        ``subsets``, unchanged in value, carrying the check.

    Raises:
        ValueError: naming how many subsets overflow, the capacity and the largest count.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> s = jaxsubset.isolate(x, x, 0, 8, capacity=4)
        >>> jaxsubset.check_overflow(s)
        Traceback (most recent call last):
        ...
        ValueError: 1 subset(s) overflow the capacity 4; the largest holds 8 points. Pass ...
    """
    if not isinstance(subsets, Subsets):
        raise TypeError(f"check_overflow: expected Subsets, got {type(subsets).__name__}")
    capacity = subsets.capacity

    def message(payload: tuple[np.ndarray, np.ndarray]) -> str:  # on the host, when it fires
        count, over = payload
        n_over, big = int(np.sum(over)), int(np.max(count, initial=0))
        return (
            f"{n_over} subset(s) overflow the capacity {capacity}; the largest holds {big} "
            f"points. Pass capacity={next_power_of_two(big)} or more "
            f"(see jaxsubset.required_capacity)."
        )

    over = subsets.overflow
    return error_if(subsets, jnp.any(over), message, (subsets.count, over))


def check_sorted(x: ArrayLike) -> Array:
    """Raise a clear error if ``x`` is unsorted or holds NaN; works under ``jit``.

    The constructors that search ``x`` check this themselves when ``x`` is concrete; inside
    ``jit`` they cannot, so call this on the traced ``x`` and use the result
    (``x = check_sorted(x)``) to get the error at run time. The check costs only the
    comparisons until it fires, and is delivered as :func:`check_overflow`'s is
    (``jaxsubset.checked`` for a plain ``ValueError`` under your own ``jit``).

    Args:
        x: ``(N,)`` sample positions.

    Returns:
        ``x``, unchanged in value, carrying the check.

    Raises:
        ValueError: naming the first NaN, or the number of descending steps and the first.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> jaxsubset.check_sorted(jnp.array([0.0, 2.0, 1.0]))
        Traceback (most recent call last):
        ...
        ValueError: `x` must be sorted ascending, but 1 descending step(s) found, the first ...
    """
    x = as_x(x, "check_sorted")
    if x.shape[0] == 0:
        return x
    bad = jnp.any(x[1:] < x[:-1])
    if jnp.issubdtype(x.dtype, jnp.inexact):
        bad = bad | jnp.any(jnp.isnan(x))

    def message(v: np.ndarray) -> str:  # on the host, from x itself, when it fires
        nan = np.isnan(v) if np.issubdtype(v.dtype, np.inexact) else np.zeros(v.shape, bool)
        if nan.any():
            return f"`x` holds NaN, the first at index {int(np.argmax(nan))}"
        down = v[1:] < v[:-1]
        return (
            f"`x` must be sorted ascending, but {int(down.sum())} descending step(s) found, "
            f"the first at index {int(np.argmax(down))}"
        )

    return error_if(x, bad, message, x)
