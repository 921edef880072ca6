"""The subset analyses sharded over a 1-D device mesh, with halos exchanged between neighbours.

The data are cut into ``D`` equal shards of ``S = ceil(N / D)`` points (the last padded with
zeros that no range reads). Every subset is computed on the device holding its first point; its
points past the shard come from the next shards through ``jax.lax.ppermute`` (a halo of
``capacity`` points, ``ceil(capacity / S)`` hops), so subsets crossing shard boundaries are
exact. The index ranges are found first with the in-memory functions of
:mod:`jaxsubset.ranges`, then grouped by owning device into one ``(D, R)`` table, so one
``jit(shard_map(...))`` serves the whole analysis.
"""

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding

from ._ranges import bin_ranges, chunk_ranges, rolling_ranges, select_ranges, sliding_ranges
from ._stream import _KIND_ARGS, KINDS, assemble, check_compute, group_size, windowed
from ._validate import as_xy, index_dtype, static_int


#: Traces of the sharded kernel so far (tests check one compilation per analysis).
TRACES = [0]
_KERNELS: dict[Any, Any] = {}


def _mesh(mesh: Mesh | None, devices: int | None, func: str) -> Mesh:
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


def _ranges(
    x: jax.Array, kind: str, kw: dict[str, Any], capacity: int | None, func: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """Concrete ``(start, count)`` of every subset and the capacity, by the in-memory path."""
    if kind not in KINDS:
        raise ValueError(
            f"{func}: `kind` must be one of {', '.join(map(repr, KINDS))}, got {kind!r}"
        )
    extra = set(kw) - _KIND_ARGS[kind]
    if extra:
        raise TypeError(
            f"{func}: unexpected argument(s) {sorted(extra)}; "
            f"{kind} takes {sorted(_KIND_ARGS[kind])}"
        )
    if kind in ("chunks", "sliding"):
        if capacity is not None:
            raise TypeError(f"{func}: `capacity` is derived for {kind}; do not pass it")
        if kind == "chunks":
            r = chunk_ranges(x, kw.get("n"), size=kw.get("size"), _func=func)
        else:
            if "size" not in kw:
                raise TypeError(f"{func}: missing the window `size`")
            r = sliding_ranges(x, kw["size"], step=kw.get("step", 1), _func=func)
        capacity = max(r.max_count, 1)
    else:
        if capacity is None:
            raise TypeError(
                f"{func}: `capacity` is required for {kind} (subset sizes depend on the data); "
                "see jaxsubset.grow_capacity to find it automatically"
            )
        capacity = static_int(capacity, "capacity", func)
        needed = {"rolling": ("width",), "bins": ("edges",), "select": ("lo", "hi")}[kind]
        for name in needed:
            if name not in kw:
                raise TypeError(f"{func}: missing the argument `{name}`")
        if kind == "rolling":
            r = rolling_ranges(
                x, kw["width"], at=kw.get("at"), closed=kw.get("closed", "right"), _func=func
            )
        elif kind == "bins":
            r = bin_ranges(x, kw["edges"], _func=func)
        else:
            r = select_ranges(x, kw["lo"], kw["hi"], closed=kw.get("closed", "left"), _func=func)
    return np.asarray(r.start, np.int64), np.asarray(r.count, np.int64), capacity


def _kernel(mesh: Mesh, key: tuple) -> Any:
    """``jit(shard_map(...))`` for one (mesh, capacity, statistics, fn, shard size, hops)."""
    if (mesh, key) in _KERNELS:
        return _KERNELS[(mesh, key)]
    capacity, stats, fn, batch_size, ddof, shard, hops = key
    (axis,) = mesh.axis_names
    n_dev = mesh.size
    spec = jax.P(axis)

    def body(xs, ys, ls, ct):
        TRACES[0] += 1
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
        out = windowed(xw, yw, ls[0], ct[0], g0, capacity, stats, fn, batch_size, ddof)
        return jax.tree_util.tree_map(lambda a: a[None], out)

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(spec, spec, spec, spec), out_specs=spec))
    _KERNELS[(mesh, key)] = f
    return f


def _put(a: np.ndarray, mesh: Mesh) -> jax.Array:
    """Place ``a`` sharded along its first axis; each process only reads its own shards."""
    sharding = NamedSharding(mesh, jax.P(mesh.axis_names[0]))
    return jax.make_array_from_callback(a.shape, sharding, lambda idx: a[idx])


def _to_host(tree: Any) -> Any:
    if jax.process_count() > 1:  # pragma: no cover - multi-host only
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.tree_util.tree_map(np.asarray, tree)


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
        kind: ``"chunks"``, ``"sliding"``, ``"rolling"``, ``"bins"`` or ``"select"``, with
            the arguments of :func:`jaxsubset.stream` (``size``, ``n``, ``step``, ``width``,
            ``at``, ``closed``, ``edges``, ``lo``, ``hi``).
        statistic: one or several of ``sum mean var std min max median argmin argmax``.
        fn: optional ``fn(x, y, mask)`` run on every subset, as :meth:`Subsets.apply`.
        capacity: static Python int, points held per subset (required for ``rolling``,
            ``bins``, ``select``; derived for ``chunks``/``sliding``).
        mesh: a 1-D :class:`jax.sharding.Mesh`; or
        devices: the number of devices to use (default: all of ``jax.devices()``).
        batch_size: for ``fn``: ``lax.map`` batch size (see :meth:`Subsets.apply`).
        ddof: delta degrees of freedom of ``var`` and ``std``.
        **kind_args: the arguments of ``kind``.

    Returns:
        dict of NumPy arrays with the subsets' batch shape: ``"start"``, ``"count"``,
        ``"overflow"``, one entry per statistic, and ``"result"`` (``fn``'s output).

    Example:
        >>> import numpy as np, jaxsubset
        >>> x = np.arange(10.0)
        >>> out = jaxsubset.shard(x, x, "sliding", size=4, step=3, statistic="mean", devices=1)
        >>> out["mean"].tolist()
        [1.5, 4.5, 7.5]
    """
    func = f"shard({kind!r})"
    stats, fn, batch_size = check_compute(statistic, fn, batch_size, func)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    mesh = _mesh(mesh, devices, func)
    x, y = as_xy(x, y, func)
    start, count, capacity = _ranges(x, kind, kind_args, capacity, func)
    shape = start.shape
    start, count = start.reshape(-1), count.reshape(-1)
    n, n_dev = x.shape[0], mesh.size
    shard_len = max(-(-n // n_dev), 1)
    hops = min(math.ceil(capacity / shard_len), n_dev - 1)
    # group the ranges by the device holding their first point: one (D, R) table
    owner = np.minimum(start // shard_len, n_dev - 1)
    per_dev = np.bincount(owner, minlength=n_dev)
    group = group_size(capacity, batch_size)
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
    # the data, padded to D * S points and sharded
    xn, yn = np.asarray(x), np.asarray(y)
    pad = n_dev * shard_len - n
    xn = np.concatenate([xn, np.zeros(pad, xn.dtype)])
    yn = np.concatenate([yn, np.zeros((pad,) + yn.shape[1:], yn.dtype)])
    kernel = _kernel(mesh, (capacity, stats, fn, batch_size, ddof, shard_len, hops))
    out = kernel(_put(xn, mesh), _put(yn, mesh), _put(lstart, mesh), _put(cnt, mesh))
    out = _to_host(out)
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
