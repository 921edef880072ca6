"""Capacity planning and opt-in runtime checks (overflow, sorted x) that work under ``jit``."""

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._subsets import Subsets
from ._typing import Array, ArrayLike
from ._validate import as_x, index_dtype, is_traced


def next_power_of_two(n: int) -> int:
    """The smallest power of two ``>= max(n, 1)``."""
    n = max(int(n), 1)
    return 1 << (n - 1).bit_length()


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
    if is_traced(counts):
        raise TypeError(
            "required_capacity: needs concrete data; call it outside `jit` and pass the result "
            "as the static `capacity`"
        )
    counts = np.asarray(counts)
    return next_power_of_two(int(counts.max()) if counts.size else 1)


def _raise_if(pred: Array, payload: Array, message: Callable[[np.ndarray], str]) -> None:
    """Raise ``ValueError(message(payload))`` where ``pred``: eagerly, or at run time under jit.

    ``pred`` is a bool scalar and ``payload`` a 1-D int array of facts for the message; under
    ``vmap`` both gain batch axes and the first flagged element is reported.
    """

    def check(p: np.ndarray, facts: np.ndarray) -> None:
        p = np.asarray(p)
        if p.any():
            facts = np.asarray(facts).reshape(-1, np.shape(facts)[-1])
            raise ValueError(message(facts[int(np.argmax(p.reshape(-1)))]))

    if is_traced((pred, payload)):
        jax.debug.callback(check, pred, payload)
    else:
        check(np.asarray(pred), np.asarray(payload))


def check_overflow(subsets: Subsets) -> Subsets:
    """Raise a clear error if any subset has more points than the capacity; works under ``jit``.

    Eagerly this raises ``ValueError`` at once. Under ``jit`` the check runs with the compiled
    function, and the ``ValueError`` arrives wrapped in a ``jax.errors.JaxRuntimeError`` whose
    message contains the same text. Returns ``subsets`` unchanged, so it can be chained.

    Args:
        subsets: the :class:`Subsets` to check.

    Returns:
        ``subsets``.

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
    over = subsets.overflow
    payload = jnp.stack([jnp.sum(over), jnp.max(subsets.count, initial=0)]).astype(index_dtype())

    def message(facts: np.ndarray) -> str:
        n_over, big = int(facts[0]), int(facts[1])
        return (
            f"{n_over} subset(s) overflow the capacity {capacity}; the largest holds {big} "
            f"points. Pass capacity={next_power_of_two(big)} or more "
            f"(see jaxsubset.required_capacity)."
        )

    _raise_if(jnp.any(over), payload, message)
    return subsets


def check_sorted(x: ArrayLike) -> Array:
    """Raise a clear error if ``x`` is unsorted or holds NaN; works under ``jit``.

    The constructors that search ``x`` check this themselves when ``x`` is concrete; inside
    ``jit`` they cannot, so call this on the traced ``x`` to get the error at run time
    (wrapped in a ``jax.errors.JaxRuntimeError``). Returns ``x`` unchanged.

    Args:
        x: ``(N,)`` sample positions.

    Returns:
        ``x``.

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
    bad = x[1:] < x[:-1]
    nan = jnp.isnan(x) if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.zeros(x.shape, bool)
    any_nan = jnp.any(nan)
    payload = jnp.stack(
        [any_nan, jnp.argmax(nan), jnp.sum(bad), jnp.argmax(bad) if x.shape[0] > 1 else 0]
    ).astype(index_dtype())

    def message(facts: np.ndarray) -> str:
        if facts[0]:
            return f"`x` holds NaN, the first at index {int(facts[1])}"
        return (
            f"`x` must be sorted ascending, but {int(facts[2])} descending step(s) found, "
            f"the first at index {int(facts[3])}"
        )

    _raise_if(any_nan | jnp.any(bad), payload, message)
    return x
