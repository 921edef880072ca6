"""Capacity that grows itself: rerun an analysis with a doubled capacity until nothing overflows.

The analysis is any function taking a static ``capacity`` keyword (usually ``jax.jit`` with
``static_argnames="capacity"``) and returning a pytree that holds :class:`Subsets`, or a mapping
/ object with an ``overflow`` entry (and optionally the true ``count``). Capacities are always
``capacity * 2**k``, so every compilation is cached by ``jit`` and reused by later calls.
"""

import functools
from collections.abc import Callable, Mapping
from typing import Any

import jax
import numpy as np

from ._core import concrete_only, next_power_of_two, static_int
from ._subsets import Subsets


def field(out: Any, name: str) -> Any:
    if isinstance(out, Mapping):
        return out.get(name)
    return getattr(out, name, None)


def needs(out: Any, capacity: int, overflow: Callable[[Any], Any] | None, func: str) -> int:
    """The smallest count known to be needed (``<= capacity`` when nothing overflows)."""
    if overflow is not None:
        flag = overflow(out)
        counts = None
    else:
        found = [
            leaf
            for leaf in jax.tree_util.tree_leaves(out, is_leaf=lambda v: isinstance(v, Subsets))
            if isinstance(leaf, Subsets)
        ]
        if found:
            counts = [s.count for s in found]
            flag = [s.overflow for s in found]
        else:
            flag = field(out, "overflow")
            count = field(out, "count")
            counts = None if count is None else [count]
            if flag is None:
                raise TypeError(
                    f"{func}: the analysis must return a pytree holding Subsets, or a mapping / "
                    "object with an `overflow` entry; otherwise pass `overflow=` (a function of "
                    f"the output returning the overflow flags), got {type(out).__name__}"
                )
    concrete_only(
        (flag, counts),
        f"{func}: cannot grow the capacity inside `jit` (the overflow flags are traced); "
        "call it eagerly around the jitted analysis",
    )
    over = any(bool(np.any(np.asarray(f))) for f in jax.tree_util.tree_leaves(flag))
    if not over:
        return capacity
    biggest = max((int(np.max(np.asarray(c), initial=0)) for c in counts or []), default=0)
    return max(biggest, capacity + 1)


def grow_capacity(
    fn: Callable[..., Any],
    *args: Any,
    capacity: int = 1,
    max_capacity: int | None = None,
    overflow: Callable[[Any], Any] | None = None,
    **kwargs: Any,
) -> tuple[Any, int]:
    """Run ``fn(*args, capacity=c, **kwargs)``, doubling ``c`` until no subset overflows.

    The capacities tried are ``capacity * 2**k``. When the output holds the true counts
    (:class:`Subsets`, or a mapping with ``count``), the next capacity jumps straight to the
    smallest such value that holds the largest count (one rerun); with a bare overflow flag it
    doubles once per run. Either way at most ``log2(N)`` reruns, each shape compiled once and
    cached by ``jit``, so the answer is exact without guessing a capacity.

    Args:
        fn: the analysis; it takes a static Python-int keyword ``capacity`` and returns a
            pytree holding :class:`Subsets`, or a mapping / object with an ``overflow`` entry
            (bool array, True where a subset overflows) and optionally ``count`` (true counts;
            :func:`jaxsubset.stream` and :func:`jaxsubset.shard` return such a mapping).
        *args: positional arguments of ``fn``.
        capacity: static Python int, the first capacity tried.
        max_capacity: optional static Python int; raise ``ValueError`` rather than run with a
            larger capacity. Default: no limit beyond ``2**62``.
        overflow: optional function of ``fn``'s output returning its overflow flags (a bool
            array or pytree of them), for outputs of another shape.
        **kwargs: keyword arguments of ``fn``.

    Returns:
        ``(out, capacity)``: the output of the run that did not overflow and the capacity it
        used.

    Raises:
        ValueError: if the needed capacity exceeds ``max_capacity``.

    Example:
        >>> import functools, jax, jax.numpy as jnp, jaxsubset
        >>> x = jnp.array([0.0, 0.1, 0.2, 0.3, 0.4, 5.0])
        >>> @functools.partial(jax.jit, static_argnames="capacity")
        ... def f(x, capacity):
        ...     return jaxsubset.rolling(x, x, 1.0, capacity=capacity)
        >>> s, cap = jaxsubset.grow_capacity(f, x, capacity=1)
        >>> cap, s.count.tolist(), s.mean().tolist()[-2:]
        (8, [1, 2, 3, 4, 5, 1], [0.2, 5.0])
    """
    func = "grow_capacity"
    if not callable(fn):
        raise TypeError(f"{func}: `fn` must be callable, got {type(fn).__name__}")
    capacity = static_int(capacity, "capacity", func)
    limit = 1 << 62
    if max_capacity is not None:
        limit = static_int(max_capacity, "max_capacity", func)
        if limit < capacity:
            raise ValueError(f"{func}: `max_capacity` ({limit}) must be >= `capacity` ({capacity})")
    while True:
        out = fn(*args, capacity=capacity, **kwargs)
        need = needs(out, capacity, overflow, func)
        if need <= capacity:
            return out, capacity
        grown = capacity * next_power_of_two(-(-need // capacity))
        if grown > limit:
            raise ValueError(
                f"{func}: subsets of up to {need} points need capacity {grown}, more than "
                f"max_capacity={limit}"
            )
        capacity = grown


def auto_capacity(
    fn: Callable[..., Any] | None = None,
    *,
    capacity: int = 1,
    max_capacity: int | None = None,
    overflow: Callable[[Any], Any] | None = None,
) -> Any:
    """Decorator: call ``fn`` through :func:`grow_capacity`, remembering the capacity reached.

    Each call starts from the largest capacity any earlier call needed (the wrapper's
    ``capacity`` attribute), so repeated calls on similar data run once, with no rerun. Usable
    bare (``@auto_capacity``) or with options (``@auto_capacity(capacity=64)``).

    Args:
        fn: the analysis, taking a static ``capacity`` keyword and returning overflow
            information (see :func:`grow_capacity`).
        capacity: static Python int, the first capacity tried.
        max_capacity: optional limit (see :func:`grow_capacity`).
        overflow: optional overflow-flag extractor (see :func:`grow_capacity`).

    Returns:
        A function taking ``fn``'s arguments without ``capacity`` and returning the output of
        the run that did not overflow.

    Example:
        >>> import functools, jax, jax.numpy as jnp, jaxsubset
        >>> @jaxsubset.auto_capacity
        ... @functools.partial(jax.jit, static_argnames="capacity")
        ... def means(x, lo, hi, capacity):
        ...     s = jaxsubset.select(x, x, lo, hi, capacity=capacity)
        ...     return {"mean": s.mean(), "count": s.count, "overflow": s.overflow}
        >>> x = jnp.arange(100.0)
        >>> means(x, jnp.array([0.0, 10.0]), jnp.array([3.0, 30.0]))["mean"].tolist()
        [1.0, 19.5]
        >>> means.capacity
        32
    """
    if fn is None:
        return functools.partial(
            auto_capacity, capacity=capacity, max_capacity=max_capacity, overflow=overflow
        )
    if not callable(fn):
        raise TypeError(f"auto_capacity: `fn` must be callable, got {type(fn).__name__}")
    start = static_int(capacity, "capacity", "auto_capacity")

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "capacity" in kwargs:
            raise TypeError("auto_capacity: do not pass `capacity`; it is chosen automatically")
        out, used = grow_capacity(
            fn,
            *args,
            capacity=wrapper.capacity,  # type: ignore[attr-defined]
            max_capacity=max_capacity,
            overflow=overflow,
            **kwargs,
        )
        wrapper.capacity = max(wrapper.capacity, used)  # type: ignore[attr-defined]
        return out

    wrapper.capacity = start  # type: ignore[attr-defined]
    return wrapper
