"""Calling the native kernels from JAX: one FFI call, batched, differentiable, CPU only.

:func:`native_ranges` is what the statistics dispatcher calls for the road ``"native"``:

- one ``jax.ffi.ffi_call`` computes every requested statistic; leading batch dimensions are
  looped in the kernel (``vmap_method="expand_dims"``), so ``vmap`` is one call;
- :func:`branch`: where the process has only CPU backends the call is emitted alone (the
  pure-JAX road is not even traced: a first call costs the kernel's compile, not the
  tracing of a tree or sliding road); where any other backend is present (or
  ``JAXSUBSET_NATIVE_PORTABLE=1``) ``jax.lax.platform_dependent`` puts the call in the CPU
  branch and the pure-JAX road in every other, so a program lowered for a GPU/TPU never
  names the CPU-only target;
- ``jax.custom_jvp``: the native value, the pure-JAX road's tangent (``grad``, ``jvp``,
  ``jacfwd``, ``vmap(grad)`` equal that road's).

Integer and bool ``y`` are read in the default float dtype, float16/bfloat16 in float32 with
results rounded back, as every road (``_registry``'s conventions).
"""

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import Array
from ._load import available


# the statistic codes of csrc/common.h (the kernel's `stats` attribute)
CODES = {
    "count": 0,
    "sum": 1,
    "mean": 2,
    "var": 3,
    "std": 4,
    "sem": 5,
    "min": 6,
    "max": 7,
    "first": 8,
    "last": 9,
    "skew": 10,
    "kurt": 11,
    "median": 12,
    "quantile": 13,
}
STATISTICS = tuple(CODES)  # what the native road computes (all but "cov"/"corr")
TARGET = "jaxsubset_range_stats"

# set while the pure-JAX road of a native call is traced (its default branch and tangent),
# so the chooser never sends that road back to the native one
_BYPASS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "jaxsubset_native_bypass", default=False
)


@contextlib.contextmanager
def bypass() -> Iterator[None]:
    """Inside: :func:`usable` is False (the pure-JAX road of a native call is being traced)."""
    token = _BYPASS.set(True)
    try:
        yield
    finally:
        _BYPASS.reset(token)


def usable() -> bool:
    """Whether ``method="auto"`` may take the native road now: kernels registered, the
    computation traced for the CPU, and not inside a native call's own pure-JAX road."""
    return not _BYPASS.get() and jax.default_backend() == "cpu" and available()


PORTABLE = "JAXSUBSET_NATIVE_PORTABLE"
ON = ("1", "on", "true", "yes")
_PORTABLE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "jaxsubset_native_portable", default=False
)


@contextlib.contextmanager
def portable_lowering() -> Iterator[None]:
    """Inside: :func:`portable` is True, as with ``JAXSUBSET_NATIVE_PORTABLE=1`` (what the
    tests use). JAX's caches are cleared on entry and exit: a function traced on the other
    side of the switch is traced anew, not taken from the cache."""
    token = _PORTABLE.set(True)
    jax.clear_caches()
    try:
        yield
    finally:
        _PORTABLE.reset(token)
        jax.clear_caches()


def portable() -> bool:
    """Whether native calls keep the pure-JAX road beside them as ``platform_dependent``'s
    other-platform branch: a non-CPU backend is in the process (``jax.extend.backend``), or
    ``JAXSUBSET_NATIVE_PORTABLE=1`` (read at every trace; set it before the process traces
    anything) or :func:`portable_lowering` asks for it: a program traced on a CPU-only
    machine that is also lowered for a GPU/TPU (``lower(lowering_platforms=...)``,
    ``jax.export``)."""
    if _PORTABLE.get() or os.environ.get(PORTABLE, "").strip().lower() in ON:
        return True
    return any(name != "cpu" for name in _backends())


def _backends() -> dict[str, Any]:
    """The process's backends by platform name (initialised, as ``jax.devices()`` does).

    ``jax.extend.backend.backends`` is the public name, but importing ``jax.extend`` costs
    ~50 ms on a first call; the module behind it is imported with jax already."""
    try:
        from jax._src import xla_bridge

        return dict(xla_bridge.backends())
    except (ImportError, AttributeError):  # pragma: no cover - a jax without that module
        import jax.extend.backend

        return dict(jax.extend.backend.backends())


def branch(native: Callable[..., Any], pure: Callable[..., Any], *args: Any) -> Any:
    """``native(*args)`` alone where the process runs only on CPUs (:func:`portable` False:
    ``pure`` is never traced), else ``lax.platform_dependent`` with ``pure`` as the
    branch of every other platform. The CPU program, and so every result, is the same."""
    if not portable():
        return native(*args)
    return jax.lax.platform_dependent(*args, cpu=native, default=pure)


def _code(name: str) -> tuple[int, float]:
    if name.startswith("quantile("):
        return CODES["quantile"], float(name[len("quantile(") : -1])
    return CODES[name], 0.0


def stats_call(
    target: str,
    stats: tuple[str, ...],
    operands: tuple[Array, ...],
    shape: tuple[int, int],
    dtype: Any,
    count_dtype: Any,
    *,
    omit: bool,
    ddof: int,
    **ints: int | None,
) -> dict[str, Array]:
    """One call of a statistics kernel (``csrc/common.h``'s attributes), batched in the kernel.

    Every result is ``shape`` in ``dtype``, ``"count"`` in ``count_dtype``; ``ints`` are the
    kernel's further integer attributes, None passed as -1 (no rule)."""
    codes = [_code(s) for s in stats]
    shapes = [jax.ShapeDtypeStruct(shape, count_dtype if s == "count" else dtype) for s in stats]
    out = jax.ffi.ffi_call(target, shapes, vmap_method="expand_dims")(
        *operands,
        stats=np.array([cd for cd, _ in codes], np.int64),
        qs=np.array([q for _, q in codes], np.float64),
        omit=np.int64(omit),
        ddof=np.int64(ddof),
        **{name: np.int64(-1 if v is None else v) for name, v in ints.items()},
    )
    return dict(zip(stats, out, strict=True))


def computing(y: Array) -> tuple[Array, Any, bool]:
    """``(y, in_dtype, half)``: ``y`` in the dtype the kernels read (integer and bool in the
    default float dtype, float16/bfloat16 in float32: ``half``) and its own dtype."""
    in_dtype = y.dtype
    if not jnp.issubdtype(in_dtype, jnp.inexact):
        y = y.astype(jnp.result_type(float))
    half = jnp.finfo(y.dtype).bits < 32
    if half:
        y = y.astype(jnp.float32)
    return y, in_dtype, half


def rounded(out: dict[str, Array], in_dtype: Any, half: bool) -> dict[str, Array]:
    """The float results rounded back to float16/bfloat16 ``y``'s dtype (:func:`computing`'s
    ``half``); integer results (the counts in the index dtype) as they are."""
    if not half:
        return out
    return {
        s: a.astype(in_dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a
        for s, a in out.items()
    }


def differentiable(native: Callable[..., Any], pure: Callable[..., Any], wrt: int | None) -> Any:
    """``native`` beside ``pure`` (:func:`branch`) as one ``jax.custom_jvp`` function whose
    tangent is ``pure``'s: along argument ``wrt`` alone (the others are positions, ranges or
    constants without a derivative), or along every argument (None)."""

    @jax.custom_jvp
    def f(*args: Any) -> Any:
        return branch(native, pure, *args)

    @f.defjvp
    def f_jvp(primals: tuple[Array, ...], tangents: tuple[Any, ...]):
        if wrt is None:
            _, tan = jax.jvp(pure, primals, tangents)
        else:

            def along(u: Array) -> Any:
                return pure(*primals[:wrt], u, *primals[wrt + 1 :])

            _, tan = jax.jvp(along, (primals[wrt],), (tangents[wrt],))
        return f(*primals), tan

    return f


def native_ranges(
    y: Array,
    start: Array,
    count: Array,
    stats: tuple[str, ...],
    *,
    omit: bool,
    ddof: int,
    fallback: Callable[[Array, Array, Array], dict[str, Array]],
    capacity: int | None = None,
) -> dict[str, Array]:
    """Statistics of ``y`` over clipped index ranges by the native kernel.

    Args:
        y: ``(N, C)`` values, any real dtype.
        start: ``(K,)`` first index of each range, in ``[0, N]`` (``clip_ranges``).
        count: ``(K,)`` points per range, ``start + count <= N``.
        stats: dispatcher names (``"quantile(0.9)"`` for a quantile), of :data:`STATISTICS`.
        omit: leave NaN readings out.
        ddof: delta degrees of freedom of var/std/sem.
        fallback: the pure-JAX road ``(y, start, count) -> dict`` with the same results: the
            branch for other platforms and the derivative.
        capacity: the pure-JAX roads' rule for the order statistics: a range of more than
            ``capacity`` points gives NaN there, and so here (None: no rule).

    Returns:
        dict of ``(K, C)`` arrays by name, dtypes as the reference road's.
    """
    y, in_dtype, half = computing(y)

    def pure(v: Array, s: Array, c: Array) -> dict[str, Array]:
        with bypass():
            out = fallback(v, s, c)
        return {name: out[name].astype(v.dtype) if name != "count" else out[name] for name in stats}

    def native(v: Array, s: Array, c: Array) -> dict[str, Array]:
        shape = (s.shape[0], v.shape[1])
        return stats_call(
            TARGET, stats, (v, s, c), shape, v.dtype, s.dtype, omit=omit, ddof=ddof,
            capacity=capacity,
        )  # fmt: skip

    return rounded(differentiable(native, pure, 0)(y, start, count), in_dtype, half)


SLIDING_TARGET = "jaxsubset_sliding_stats"


def native_sliding(
    y: Array,
    length: Array | None,
    window: int,
    stats: tuple[str, ...],
    *,
    omit: bool,
    ddof: int,
    min_periods: int | None,
    fallback: Callable[[Array, Array], dict[str, Array]],
    lead: int = 0,
    capacity: int | None = None,
) -> dict[str, Array]:
    """Fixed-count windows by the native kernel: no range arrays, ``min_periods`` inside.

    Row ``k``'s window is ``[k + lead - window + 1, k + lead]`` cut to the first ``length``
    rows (``None``: all). With an int ``min_periods`` every result (``"count"`` too) comes in
    the float dtype, finished as ``_sliding.finish``; else ``"count"`` in the index dtype.

    Args:
        y: ``(N, C)`` values, any real dtype.
        length: ``()`` present rows, or ``None``.
        window: points per window (static).
        stats: dispatcher names, of :data:`STATISTICS`.
        omit: leave NaN readings out.
        ddof: delta degrees of freedom of var/std/sem.
        min_periods: ``None`` or the fewest counted points of a result that is not NaN.
        fallback: the pure-JAX road ``(y, length) -> dict`` with the same results: the branch
            for other platforms and the derivative.
        lead: rows the window ends after its own row (static).
        capacity: the order statistics of a window of more than ``capacity`` points are
            NaN, as on the pure-JAX roads (None: no rule).

    Returns:
        dict of ``(N, C)`` arrays by name.
    """
    from .._core import index_dtype

    y, in_dtype, half = computing(y)
    idt = index_dtype()
    n = y.shape[0]
    ln = jnp.asarray(n if length is None else length, idt).reshape(1)
    done = min_periods is not None

    def pure(v: Array, m: Array) -> dict[str, Array]:
        with bypass():
            out = fallback(v, m[0])
        return {s: out[s].astype(idt if s == "count" and not done else v.dtype) for s in stats}

    def native(v: Array, m: Array) -> dict[str, Array]:
        return stats_call(
            SLIDING_TARGET, stats, (v, m), (n, v.shape[1]), v.dtype, v.dtype if done else idt,
            omit=omit, ddof=ddof, window=window, lead=lead, min_periods=min_periods,
            capacity=capacity,
        )  # fmt: skip

    return rounded(differentiable(native, pure, 0)(y, ln), in_dtype, half)


XWIDTH_TARGET = "jaxsubset_xwidth_stats"


def native_xwidth(
    x: Array,
    y: Array,
    width: Array,
    raw: Any,
    stats: tuple[str, ...],
    *,
    omit: bool,
    ddof: int,
    lo_right: bool,
    hi_right: bool,
    min_periods: int,
    fallback: Callable[[Array, Array, Any], dict[str, Array]],
    capacity: int | None = None,
    length: Array | None = None,
) -> dict[str, Array]:
    """x-width windows, one per row, resolved and reduced by the native kernel.

    The kernel finds each row's window by two pointers (three for windows that end by
    value) over sorted ``x`` (the pure-JAX
    resolver's rule, see ``csrc/xwidth.cc``) and finishes ``min_periods``: every result, the
    ``"count"`` too, comes in ``y``'s float dtype.

    Args:
        x: ``(N,)`` sorted positions, float32/float64/int32/int64.
        y: ``(N, C)`` values, any real dtype.
        width: float ``x``: ``(1,)`` the width in the promoted float dtype; integer ``x``:
            ``(3,)`` ``(wrap, t, big)`` of ``resolve._keys.int_width`` in x's dtype; windows
            that end by value (``x <= x[i] + upper``): ``(2,)``/``(6,)``, the upper
            bound's operand after the lower one's.
        raw: the widths as the pure-JAX resolver takes them, any pytree (for ``fallback``).
        stats: dispatcher names, of :data:`STATISTICS`.
        omit: leave NaN readings out.
        ddof: delta degrees of freedom of var/std/sem.
        lo_right: the lower bound is open (``x > x[i] - width``).
        hi_right: a window ends at its own row (``closed`` "right"/"both").
        min_periods: the fewest counted points of a result that is not NaN.
        fallback: the pure-JAX road ``(x, y, width) -> dict`` of finished results: the branch
            for other platforms and the derivative.
        capacity: the order statistics of a window of more than ``capacity`` points are
            NaN, as on the pure-JAX roads (None: no rule).
        length: ``()`` the rows present (an eager call's bucket padding after them: ``x``
            padded with its last value, so no present row's window changes); the results of
            the rows from ``length`` on are unspecified (the caller cuts them). None: all.

    Returns:
        dict of ``(N, C)`` arrays by name.
    """
    from .._core import index_dtype

    y, in_dtype, half = computing(y)
    n = y.shape[0]
    idt = index_dtype()
    ln = jnp.full((1,), n, idt) if length is None else jnp.asarray(length, idt).reshape(1)

    def pure(p: Array, v: Array, op: Array, w: Any, m: Array) -> dict[str, Array]:
        with bypass():
            out = fallback(p, v, w)
        return {s: out[s].astype(v.dtype) for s in stats}

    def native(p: Array, v: Array, op: Array, w: Any, m: Array) -> dict[str, Array]:
        return stats_call(
            XWIDTH_TARGET, stats, (p, v, op, m), (n, v.shape[1]), v.dtype, v.dtype,
            omit=omit, ddof=ddof, lo_right=lo_right, hi_right=hi_right,
            min_periods=min_periods, capacity=capacity,
        )  # fmt: skip

    # (x and the width: positions and bounds, no derivative, as the resolver's integer ranges)
    out = differentiable(native, pure, 1)(x, y, width, jax.tree_util.tree_map(jnp.asarray, raw), ln)
    return rounded(out, in_dtype, half)
