"""``jaxsubset.explain``: print which road computed each statistic of a call, and why."""

import dataclasses
from collections.abc import Callable
from typing import Any

from ._choose import _RECORD, Choice


@dataclasses.dataclass(frozen=True)
class Explanation:
    """The road choices made during one call (``print`` it), and the call's result.

    Attributes:
        result: what the call returned.
        choices: one :class:`Choice` per statistic call made, in order.
    """

    result: Any
    choices: tuple[Choice, ...]

    def __str__(self) -> str:
        if not self.choices:
            return "no road chosen (no statistic computed, or a cached jitted function)"
        return "\n".join(map(str, self.choices))


def explain(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Explanation:
    """Call ``fn(*args, **kwargs)`` and report how each statistic was computed.

    Every statistic function (:func:`range_statistic`, :func:`rolling_statistic`,
    :func:`window_statistic`, :func:`binned_statistic`, ...) asks ONE chooser how to lay its
    subsets out (index ranges, fixed-count windows or bin labels) and which road computes
    each statistic (``"tree"``, ``"reference"``, ``"wavelet"``, ``"blocks"``, ``"scatter"``,
    ``"sort"``); ``method=`` forces a road. ``explain`` records those choices. A function
    under ``jax.jit`` chooses while it is traced: a cached jitted function records nothing.

    Args:
        fn: any callable, typically a public jaxsubset function or a function calling some.
        *args: its positional arguments.
        **kwargs: its keyword arguments.

    Returns:
        :class:`Explanation` (``.result``, ``.choices``); ``print`` it for one line per choice.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> x = jnp.arange(10.0)
        >>> at = jnp.array([2.0, 5.0])  # two windows of width 3 ending at 2 and 5
        >>> e = jaxsubset.explain(
        ...     jaxsubset.rolling_statistic, x, x, 3.0, statistic="mean", at=at, method="tree"
        ... )
        >>> print(e)  # (method="auto" picks "native" on the CPU: the C++ kernels)
        rolling_statistic (method='tree'): ranges: mean -> tree (2 ranges over 10 points)
        >>> e.result.tolist()
        [1.0, 4.0]
    """
    record: list[Choice] = []
    token = _RECORD.set(record)
    try:
        result = fn(*args, **kwargs)
    finally:
        _RECORD.reset(token)
    return Explanation(result, tuple(record))
