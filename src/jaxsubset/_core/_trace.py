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

from typing import Any

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
