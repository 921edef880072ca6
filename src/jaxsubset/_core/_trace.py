"""When a call is eager: THE rule deciding between the eager path and the traced path.

Every public function has two paths. The *eager* path (every input concrete, outside every JAX
trace) may read results back to the host: it buckets shapes, derives capacities and numbers of
windows from the data, and converts results with NumPy. The *traced* path stays inside XLA.

Whether an input is concrete is not enough to pick the eager path: inside ``jax.jit`` (and
``lax.scan``, ``lax.cond``, ``jax.make_jaxpr``...) every operation is staged into the program,
even one on a closed-over constant, so a result read back to NumPy raises JAX's
``TracerArrayConversionError``. :func:`eager` is the one place the library decides; under
``vmap`` or ``grad`` alone an operation on constants is computed at once, so the eager path stays
right there and is kept (the same values, the same programs as outside).
"""

from collections.abc import Callable
from typing import Any, TypeVar

import jax
from jax import lax


try:  # a trace-free check before the probe: the eager common case costs ~0.2 us
    from jax._src.core import trace_state_clean as _trace_state_clean
except ImportError:  # pragma: no cover - a JAX that moved it: the probe alone decides

    def _trace_state_clean() -> bool:
        return False


def is_traced(value: Any) -> bool:
    """True when ``value`` is (or contains) a JAX tracer, i.e. not known at trace time."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value))


T = TypeVar("T")


def now_or_traced(
    value: Any,
    now: Callable[[Any], T] | None = None,
    traced: Callable[[Any], T] | None = None,
) -> T:
    """THE fork of every check and conversion: ``now(value)`` when ``value`` is concrete,
    else ``traced(value)`` (either by default ``value`` itself).

    A concrete argument is checked (and converted) on the host at once: NumPy, exact, no
    program per shape, a message naming the argument. A traced one cannot be read at trace
    time; ``traced`` says what replaces the check there (a run-time guard, a JAX form of the
    same computation, or a refusal naming the argument). Every public function's checks go
    through here, so the eager/traced fork is written once (the other forks: the resolver's
    exact keys, ``resolve/_keys`` and ``resolve/_exact``, and the eager decorator,
    ``resolve/_eager``).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> now_or_traced(jnp.array(3.0), lambda v: "now", lambda v: "traced")
        'now'
        >>> jax.jit(lambda v: now_or_traced(v, lambda _: 0.0, lambda t: t + 1))(1.0).item()
        2.0
    """
    do = traced if is_traced(value) else now
    return value if do is None else do(value)


def concrete_only(value: Any, message: str) -> Any:
    """``value`` when it is concrete, else ``TypeError(message)``: for what only the host can
    compute (calendar edges, a capacity read from the data), named in ``message``."""

    def refuse(_: Any) -> Any:
        raise TypeError(message)

    return now_or_traced(value, traced=refuse)


def in_trace() -> bool:
    """Whether an operation run now is staged into a program instead of computed at once.

    True inside ``jax.jit`` (also around a ``vmap`` or ``grad`` in it), ``lax.scan``/``cond``
    bodies and ``make_jaxpr``; False eagerly, under ``jax.ensure_compile_time_eval``, and under
    ``vmap``/``grad`` alone (there an operation on constants has a concrete result).

    Example:
        >>> import jax
        >>> in_trace()
        False
        >>> seen = []
        >>> _ = jax.jit(lambda v: seen.append(in_trace()) or v)(1)
        >>> seen
        [True]
    """
    if _trace_state_clean():
        return False
    # a probe: inside a staging trace even a constant becomes a tracer
    return isinstance(lax.full((), 0), jax.core.Tracer)


def require_eager(func: str, *values: Any) -> None:
    """Raise a clear error when a host driver (``stream``, ``shard``) is called in a trace.

    They place data on the devices themselves and return NumPy results, so they run outside
    ``jit``; inside a jitted function the constructors and statistics do the same work.
    """
    if not eager(*values):
        raise TypeError(
            f"{func}: runs outside `jax.jit`/`vmap`/`grad` (it places the data on the devices "
            "itself and returns NumPy arrays), got traced arguments or a call inside a trace; "
            "inside a jitted function use the constructors (jaxsubset.chunks, rolling, ...) "
            "and range_statistic / rolling_statistic / binned_statistic"
        )


def eager(*values: Any) -> bool:
    """Whether a call with these inputs takes the eager path: concrete, outside every trace.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> x = jnp.arange(3.0)
        >>> eager(x)
        True
        >>> seen = []
        >>> _ = jax.jit(lambda y: seen.append(eager(x)) or y)(1.0)  # x constant, call traced
        >>> seen
        [False]
    """
    return not is_traced(values) and not in_trace()


def backend() -> str:
    """The backend family the computation is traced for (``"cpu"``, ``"gpu"``, ``"tpu"``)."""
    return jax.default_backend()
