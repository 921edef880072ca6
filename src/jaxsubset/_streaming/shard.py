"""``shard``: the subset analyses over a 1-D device mesh, with halos exchanged between neighbours.

The data are cut into ``D`` equal shards of ``S = ceil(N / D)`` points (the last padded with
zeros that no range reads). Every subset is computed on the device holding its first point; its
points past the shard come from the next shards through ``jax.lax.ppermute`` (a halo of
``capacity`` points, ``ceil(capacity / S)`` hops), so subsets crossing shard boundaries are
exact. The index ranges are found first on the host, by arithmetic or by x-only passes in
blocks (:mod:`.plan`, as for :func:`jaxsubset.stream`, with the semantics of
:mod:`jaxsubset.ranges`),
then grouped by owning device into one ``(D, R)`` table, so one ``jit(shard_map(...))`` serves
the whole analysis. ``x`` and ``y`` stay on the host (memory maps are fine) and each device is
given only its own shard.
"""

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding

from .._core import (
    check_int_fits,
    check_nan_policy,
    index_dtype,
    require_eager,
    reraise,
    static_int,
)
from .assembly import assemble
from .kernels import KernelSpec, check_compute, group_size, windowed
from .plan import plan
from .sources import ArraySource


def make_mesh(mesh: Mesh | None, devices: int | None, func: str) -> Mesh:
    if mesh is not None and devices is not None:
        raise TypeError(f"{func}: pass `mesh` or `devices`, not both")
    if mesh is not None:
        if not isinstance(mesh, Mesh):
            raise TypeError(
                f"{func}: `mesh` must be a jax.sharding.Mesh, got {type(mesh).__name__}"
            )
        if len(mesh.axis_names) != 1:
            raise ValueError(
                f"{func}: `mesh` must be 1-D (one axis), got axes {tuple(mesh.axis_names)}"
            )
        return mesh
    available = jax.devices()
    if devices is None:
        devices = len(available)
    devices = static_int(devices, "devices", func)
    if devices > len(available):
        raise ValueError(
            f"{func}: `devices` must be <= the {len(available)} device(s) available, got {devices}"
        )
    return Mesh(np.array(available[:devices]), ("shards",))


@dataclasses.dataclass(frozen=True)
class ShardSpec:
    """The static part of a sharded analysis: the mesh, what to compute, shard size and hops."""

    mesh: Mesh
    kernel: KernelSpec
    shard: int  # points per shard
    hops: int  # shards the halo reaches into


@functools.partial(jax.jit, static_argnames="spec")
def shard_kernel(
    xs: jax.Array, ys: jax.Array, ls: jax.Array, ct: jax.Array, *, spec: ShardSpec
) -> dict[str, Any]:
    """``shard_map`` of :func:`windowed` over the mesh, compiled by JAX once per ``spec``."""
    mesh, shard, hops, capacity = spec.mesh, spec.shard, spec.hops, spec.kernel.capacity
    (axis,) = mesh.axis_names
    n_dev = mesh.size
    part = jax.P(axis)

    def body(xs, ys, ls, ct):
        # halo: the next `hops` shards' points, from the right neighbours (zeros past the end)
        xparts, yparts = [xs], [ys]
        for k in range(1, hops + 1):
            perm = [(j, j - k) for j in range(k, n_dev)]
            xparts.append(jax.lax.ppermute(xs, axis, perm))
            yparts.append(jax.lax.ppermute(ys, axis, perm))
        short = shard + capacity - (hops + 1) * shard  # every window fits: no clamping
        if short > 0:
            xparts.append(jnp.zeros((short,), xs.dtype))
            yparts.append(jnp.zeros((short,) + ys.shape[1:], ys.dtype))
        xw, yw = jnp.concatenate(xparts), jnp.concatenate(yparts)
        g0 = (jax.lax.axis_index(axis) * shard).astype(index_dtype())
        out = windowed(xw, yw, ls[0], ct[0], g0, spec.kernel)
        return jax.tree_util.tree_map(lambda a: a[None], out)

    mapped = jax.shard_map(body, mesh=mesh, in_specs=(part,) * 4, out_specs=part)
    return mapped(xs, ys, ls, ct)


def axis_of(mesh: Mesh) -> str:
    return mesh.axis_names[0]


def host_view(a: Any) -> np.ndarray:
    """A NumPy view of ``a`` (memory maps stay memory maps; JAX arrays come to the host)."""
    return a if isinstance(a, np.ndarray) else np.asarray(a)


def put_sharded(
    a: np.ndarray,
    mesh: Mesh,
    length: int | None = None,
    dtype: Any = None,
    checked: tuple[str, str] | None = None,
) -> jax.Array:
    """Place ``a`` sharded along its first axis, zero-padded to ``length`` rows.

    Each process reads only the rows of its own devices' shards (multi-host friendly).
    ``checked=(name, func)``: refuse integers that ``dtype`` would wrap (int64 in 32-bit mode).
    """
    length = a.shape[0] if length is None else length
    dtype = a.dtype if dtype is None else dtype
    sharding = NamedSharding(mesh, jax.P(axis_of(mesh)))

    def rows(idx: Any) -> np.ndarray:  # a tuple of slices, one per axis
        lo, hi, _ = idx[0].indices(length)
        out = np.zeros((hi - lo,) + a.shape[1:], dtype)
        got = np.asarray(a[lo : min(hi, a.shape[0])])
        if checked is not None:
            check_int_fits(got, *checked)
        got = np.asarray(got, dtype)
        out[: got.shape[0]] = got
        return out

    return jax.make_array_from_callback((length,) + a.shape[1:], sharding, rows)


def gather_home(tree: Any) -> Any:
    if jax.process_count() > 1:  # several processes: tests/test_multiprocess.py
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.tree_util.tree_map(np.asarray, tree)


def planned_ranges(
    src: ArraySource, kind: str, kind_args: dict[str, Any], capacity: int | None
) -> tuple[np.ndarray, np.ndarray, tuple[int, ...], int]:
    """``(start, count, shape, capacity)``: every subset's global index range, flat, in the
    subsets' order (the planner's x-only passes in blocks), their batch shape and capacity."""
    pl = plan(src, kind, kind_args, capacity, 1 << 20, name="shard")
    start, count, idx = pl.provider.take(math.inf, src.length)
    if pl.shape is not None:  # ranges come sorted by start: back to the subsets' order
        order = np.empty_like(idx)
        order[idx] = np.arange(idx.size)
        start, count = start[order], count[order]
        shape = pl.shape
    else:
        shape = start.shape
    return start.reshape(-1), count.reshape(-1), tuple(shape), pl.capacity


def owner_table(
    start: np.ndarray, count: np.ndarray, n_dev: int, shard_len: int, group: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ranges grouped by the device holding their first point: ``(table, lstart, cnt)``,
    each ``(D, R)`` (``R`` a multiple of ``group``): the range's index (-1: an empty slot),
    its start within the device's shard, and its count."""
    owner = np.minimum(start // shard_len, n_dev - 1)
    per_dev = np.bincount(owner, minlength=n_dev)
    rows = -(-max(int(per_dev.max(initial=0)), 1) // group) * group
    order = np.argsort(owner, kind="stable")
    slot = np.arange(order.size) - np.repeat(np.cumsum(per_dev) - per_dev, per_dev)
    idt = index_dtype()
    table = np.full((n_dev, rows), -1, np.int64)
    lstart = np.zeros((n_dev, rows), idt)
    cnt = np.zeros((n_dev, rows), idt)
    table[owner[order], slot] = order
    lstart[owner[order], slot] = start[order] - owner[order] * shard_len
    cnt[owner[order], slot] = count[order]
    return table, lstart, cnt


def shard(
    x: Any,
    y: Any,
    kind: str,
    *,
    statistic: str | Sequence[str] | None = None,
    fn: Callable[..., Any] | None = None,
    capacity: int | None = None,
    mesh: Mesh | None = None,
    devices: int | None = None,
    batch_size: int | None = None,
    ddof: int = 0,
    nan_policy: str = "propagate",
    **kind_args: Any,
) -> dict[str, Any]:
    """Run a subset analysis with the data sharded over a 1-D device mesh, exactly.

    The points are split into equal shards, one per device (``N`` need not divide); each
    subset is computed on the device holding its first point, with the points past the shard
    brought from the neighbouring devices by ``jax.lax.ppermute`` (a halo of ``capacity``
    points), so subsets crossing shards are exact. Results equal the single-device in-memory
    path (``jaxsubset.<kind>(x, y, ...)`` then the reductions or ``Subsets.apply(fn)``). For
    several hosts, call ``jax.distributed.initialize()`` on every process first and pass a mesh
    over ``jax.devices()``; every process then passes the same ``x``/``y`` (e.g. memory-mapped)
    and reads only its own shards.

    Args:
        x: ``(N,)`` sorted sample positions.
        y: ``(N, *channels)`` values.
        kind: ``"chunks"``, ``"sliding"``, ``"rolling"``, ``"dynamic"``, ``"bins"`` or
            ``"select"``, with the arguments of :func:`jaxsubset.stream` (``size``, ``n``,
            ``step``, ``width``, ``at``, ``closed``, ``center``, ``before``, ``after``,
            ``every``, ``period``, ``offset``, ``edges``, ``lo``, ``hi``).
        statistic: one or several of ``sum mean var std sem min max first last skew kurt
            median argmin argmax`` (as :func:`jaxsubset.stream`).
        fn: optional ``fn(x, y, mask)`` run on every subset, as :meth:`Subsets.apply`.
        capacity: static Python int, points held per subset (required for ``rolling``,
            ``bins``, ``select``; derived for ``chunks``/``sliding``).
        mesh: a 1-D :class:`jax.sharding.Mesh`; or
        devices: the number of devices to use (default: all of ``jax.devices()``).
        batch_size: for ``fn``: ``lax.map`` batch size (see :meth:`Subsets.apply`).
        ddof: delta degrees of freedom of ``var``, ``std`` and ``sem``.
        nan_policy: missing readings in ``y``: ``"propagate"``, ``"omit"`` or ``"raise"``.
        **kind_args: the arguments of ``kind``.

    Returns:
        dict of NumPy arrays with the subsets' batch shape: ``"start"``, ``"count"``,
        ``"overflow"``, one entry per statistic, and ``"result"`` (``fn``'s output).

    Raises:
        ValueError: on bad arguments; with ``nan_policy="raise"``, if a subset holds a NaN
            ``y`` (the plain ``ValueError`` of :meth:`Subsets.mean` and the others).

    Example:
        >>> import numpy as np, jaxsubset
        >>> x = np.arange(10.0)
        >>> out = jaxsubset.shard(x, x, "sliding", size=4, step=3, statistic="mean", devices=1)
        >>> out["mean"].tolist()
        [1.5, 4.5, 7.5]
    """
    func = f"shard({kind!r})"
    require_eager(func, x, y)
    stats, fn, batch_size = check_compute(statistic, fn, batch_size, func)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    mesh = make_mesh(mesh, devices, func)
    # x and y stay on the host (memory-mapped is fine): the ranges come from x-only passes in
    # blocks and every device receives only its own shard, so nothing holds all N points twice
    src = ArraySource(host_view(x), host_view(y), 1 << 20, func, "arrays")
    start, count, shape, capacity = planned_ranges(src, kind, kind_args, capacity)
    n_dev = mesh.size
    shard_len = max(-(-src.length // n_dev), 1)
    hops = min(math.ceil(capacity / shard_len), n_dev - 1)
    group = group_size(capacity, batch_size)
    table, lstart, cnt = owner_table(start, count, n_dev, shard_len, group)
    # the data, padded to D * S points (zeros no range reads), each device given its shard
    total = n_dev * shard_len
    xs = put_sharded(src.x, mesh, total, src.xdt, ("x", func)) if fn is not None else None
    ys = put_sharded(src.y, mesh, total, src.ydt, ("y", func))
    if xs is None:  # statistics never read x: zeros, made on the devices
        xs = jax.device_put(jnp.zeros(total, src.ydt), NamedSharding(mesh, jax.P(axis_of(mesh))))
    spec = ShardSpec(
        mesh, KernelSpec(capacity, stats, fn, batch_size, ddof, nan_policy), shard_len, hops
    )
    with reraise():  # a fired check (nan_policy="raise") arrives as its plain ValueError
        out = gather_home(
            shard_kernel(xs, ys, put_sharded(lstart, mesh), put_sharded(cnt, mesh), spec=spec)
        )
    valid = table >= 0
    result = {
        "start": start.reshape(shape),
        "count": count.reshape(shape),
    }
    result["overflow"] = result["count"] > capacity
    if start.size:
        flat = assemble(
            [(table[valid], jax.tree_util.tree_map(lambda a: a[valid], out))], start.size, shape
        )
        result.update(flat)
    return result
