"""The compiled kernels: per-subset results of one block (or shard) of points.

Kernels are ``jax.jit`` functions with one hashable static argument, :class:`KernelSpec`, so
their compiled programs live in JAX's own cache: one per spec and block shape, shared by every
block and every later call with the same spec, and freed by ``jax.clear_caches()``.
"""

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from .._core import static_int
from .._subsets import Subsets
from ..reduce import STATISTICS as REGISTRY_STATISTICS


# The registry's statistics that a Subsets reduction computes without a parameter (the
# quantile needs its q; count comes from the ranges, on the host), and the global positions of
# the extremes.
STATISTICS = (
    *(s for s in REGISTRY_STATISTICS if s not in ("count", "quantile")),
    "argmin",
    "argmax",
)


@dataclasses.dataclass(frozen=True)
class KernelSpec:
    """What a kernel computes per subset: hashable, the static argument of the kernels' jit.

    The compiled kernels live in JAX's own cache (keyed by this spec, the shapes and dtypes),
    so ``jax.clear_caches()`` frees them and, with them, the references to ``fn``.
    """

    capacity: int
    statistics: tuple[str, ...]
    fn: Callable | None
    batch_size: int | None
    ddof: int = 0
    nan_policy: str = "propagate"


def compute(s: Subsets, spec: KernelSpec, batch_size: int | None) -> dict[str, Any]:
    """The per-subset results of one call: the named reductions and/or ``fn``'s output."""
    out: dict[str, Any] = {}
    for name in spec.statistics:
        if name in ("var", "std", "sem"):
            out[name] = getattr(s, name)(ddof=spec.ddof, nan_policy=spec.nan_policy)
        elif name == "valid":
            out[name] = s.valid_count()
        elif name != "count":  # the true counts come from the ranges, on the host
            out[name] = getattr(s, name)(nan_policy=spec.nan_policy)
    if spec.fn is not None:
        out["result"] = s.apply(spec.fn, batch_size=batch_size, nan_policy=spec.nan_policy)
    return out


def group_size(capacity: int, batch_size: int | None) -> int:
    """Subsets gathered at once in the kernel: about 2**16 values, a slab that stays in cache."""
    if batch_size is not None:
        return batch_size
    return max(1, (1 << 16) // capacity)


def windowed(
    xb: jax.Array,
    yb: jax.Array,
    lstart: jax.Array,
    count: jax.Array,
    g0: jax.Array,
    spec: KernelSpec,
) -> dict[str, Any]:
    """Per-subset results of the ranges ``[lstart, lstart + count)`` of a window of points.

    The same values as ``gather_padded`` then :func:`compute`, but ``group_size`` subsets at a time
    with ``lax.map``, so the gathered slab stays in cache instead of materialising all
    ``(R, capacity)`` values. ``len(xb) >= max(lstart) + capacity`` for every non-empty range,
    so ``dynamic_slice`` never clamps a window that holds points.
    """
    capacity = spec.capacity
    group = group_size(capacity, spec.batch_size)
    rows = lstart.shape[0] // group
    idt = lstart.dtype
    offsets = jnp.arange(capacity, dtype=idt)

    def one_group(args: tuple[jax.Array, jax.Array]) -> dict[str, Any]:
        ls, ct = args
        xs = jax.vmap(lambda i: jax.lax.dynamic_slice_in_dim(xb, i, capacity))(ls)
        ys = jax.vmap(lambda i: jax.lax.dynamic_slice_in_dim(yb, i, capacity))(ls)

        def full() -> dict[str, Any]:
            mask = jnp.ones((group, capacity), bool)  # a constant: XLA drops the masking
            s = Subsets(x=xs, y=ys, mask=mask, start=ls + g0, count=ct)
            return compute(s, spec, None)

        def masked() -> dict[str, Any]:
            mask = offsets < jnp.minimum(ct, capacity)[:, None]
            s = Subsets(
                x=jnp.where(mask, xs, 0),
                y=jnp.where(mask.reshape(mask.shape + (1,) * (ys.ndim - 2)), ys, 0),
                mask=mask,
                start=ls + g0,
                count=ct,
            )
            return compute(s, spec, None)

        return jax.lax.cond(jnp.all(ct == capacity), full, masked)

    out = jax.lax.map(one_group, (lstart.reshape(rows, group), count.reshape(rows, group)))
    return jax.tree_util.tree_map(lambda a: a.reshape((rows * group,) + a.shape[2:]), out)


@functools.partial(jax.jit, static_argnames="spec")
def block_kernel(
    xb: jax.Array,
    yb: jax.Array,
    lstart: jax.Array,
    count: jax.Array,
    g0: jax.Array,
    *,
    spec: KernelSpec,
) -> dict[str, Any]:
    """:func:`windowed` over one block + halo, compiled once per ``spec`` and block shape."""
    return windowed(xb, yb, lstart, count, g0, spec)


@functools.partial(jax.jit, static_argnames="spec")
def chunk_kernel(
    xb: jax.Array, yb: jax.Array, count: jax.Array, g0: jax.Array, *, spec: KernelSpec
) -> dict[str, Any]:
    """Chunks of ``spec.capacity`` aligned with the block: a reshape instead of a gather."""
    size = spec.capacity
    rows = yb.shape[0] // size
    idt = count.dtype
    xs, ys = xb.reshape(rows, size), yb.reshape((rows, size) + yb.shape[1:])
    start = g0 + jnp.arange(rows, dtype=idt) * size

    def full() -> dict[str, Any]:
        # every chunk full (all blocks but the last): a constant mask, which XLA folds away
        mask = jnp.ones((rows, size), bool)
        s = Subsets(x=xs, y=ys, mask=mask, start=start, count=count)
        return compute(s, spec, spec.batch_size)

    def masked() -> dict[str, Any]:
        # slots past the data are the block's zero padding, as gather_padded's padding
        mask = jnp.arange(size, dtype=idt) < jnp.minimum(count, size)[:, None]
        s = Subsets(x=xs, y=ys, mask=mask, start=start, count=count)
        return compute(s, spec, spec.batch_size)

    return jax.lax.cond(jnp.all(count == size), full, masked)


def check_compute(
    statistic: Any, fn: Any, batch_size: Any, func: str
) -> tuple[tuple[str, ...], Callable | None, int | None]:
    """Validate ``statistic`` / ``fn`` / ``batch_size``; return ``(statistics, fn, batch_size)``."""
    if statistic is None and fn is None:
        raise TypeError(f"{func}: pass `statistic` (e.g. 'mean' or ('mean', 'std')) and/or `fn`")
    stats: tuple[str, ...] = ()
    if statistic is not None:
        stats = (statistic,) if isinstance(statistic, str) else tuple(statistic)
        for s in stats:
            if s == "quantile":
                raise ValueError(
                    f"{func}: statistic 'quantile' is not streamed (it needs its q); use "
                    "`fn=lambda x, y, mask: jnp.nanquantile(jnp.where(mask, y, jnp.nan), q)`"
                )
            if s in ("cov", "corr"):
                raise ValueError(
                    f"{func}: statistic {s!r} is between channels (a (C, C) matrix per subset) "
                    "and is not streamed; use jaxsubset.range_statistic or rolling_statistic "
                    f"with {s!r} on the data in memory, or `fn=` with the matrix you need"
                )
            if s not in STATISTICS and s not in ("count", "valid"):
                raise ValueError(
                    f"{func}: unknown statistic {s!r}; choose from {', '.join(STATISTICS)}"
                )
    if fn is not None and not callable(fn):
        raise TypeError(f"{func}: `fn` must be callable, got {type(fn).__name__}")
    if batch_size is not None:
        batch_size = static_int(batch_size, "batch_size", func)
    return stats, fn, batch_size
