"""Positions in JAX's default 32-bit mode: compared exactly, or refused by name.

JAX's 32-bit mode holds floats as float32 and integers as int32, so positions that those
dtypes cannot hold would be changed on their way in: float64 Unix-epoch seconds (float32
spacing 128 s near 1.7e9), ``1e9 + k * 0.5``, a query ``3.0000001`` (float32: ``3.0``), int64
beyond int32, subnormal float64, and time axes (int64 nanoseconds). This module owns the rule
that keeps every subset, window, bin and index exact there:

- A call whose positions (``x`` and the bounds, anchors, widths, steps or query values it
  computes with) JAX's 32-bit dtypes hold exactly runs as it always does.
- Otherwise, when every position is concrete (NumPy or Python values, also closed over inside
  ``jit``), the positions are resolved as in JAX's 64-bit mode, in a scoped, thread-local
  ``jax_enable_x64`` (:func:`positions64`): the same index ranges, bins and indices as 64-bit
  mode, bit for bit. Only the positions are resolved there; the results (index ranges,
  indices) come back in the 32-bit mode's dtypes (:func:`narrow`), and the statistics of
  ``y`` run as in any 32-bit call.
- A traced position (a bound, width or step inside ``jit``/``vmap``) next to a concrete
  ``x`` the 32-bit dtypes cannot hold: the resolver is traced in the same scoped 64-bit
  mode, so the program compares and computes in float64/int64 as in 64-bit mode (the traced
  value as JAX holds it: a traced float is float32) and narrows its index ranges to int32.
  Where that is not possible (``binned_statistic``'s traced edges, whose bins are found on
  the host), a TypeError naming both: a rounded ``x`` would give silently wrong subsets.

Values that are results rather than positions keep JAX's rule: ``Subsets.x`` of float64 ``x``
holds float32 in 32-bit mode (as ``y`` does), and a time axis, whose ``Subsets.x`` would be
int64 nanoseconds, needs 64-bit mode for :class:`~jaxsubset.Subsets` (its index ranges and
statistics do not).
"""

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import all_blocks, as_xy, is_traced, static_int, time_kind


def x64() -> bool:
    """Whether JAX's 64-bit mode is on (in this thread)."""
    return bool(jax.config.read("jax_enable_x64"))


def unheld(value: Any) -> tuple[int, Any] | None:
    """``(flat index, value)`` of the first element of a concrete value that JAX's 32-bit
    mode would change (round or wrap), or None when it holds every element exactly.

    Dates, durations and strings (periods, ``"7D"``) count as not held: a time axis is int64
    nanoseconds. Traced values and JAX arrays are held (they already are JAX's).
    """
    if value is None or isinstance(value, jax.Array) or is_traced(value):
        return None
    if isinstance(value, str) or time_kind(value) is not None:
        return 0, value
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return None  # not a position: the function's own checks refuse it
    kind, size = arr.dtype.kind, arr.dtype.itemsize
    flat = arr.reshape(-1)
    if kind == "f" and size > 4:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            bad = (flat.astype(np.float32) != flat) & ~np.isnan(flat)
    elif kind in "iu" and size > 4:
        lo, hi = (0, 2**32 - 1) if kind == "u" else (-(2**31), 2**31 - 1)
        bad = (flat < lo) | (flat > hi)  # NumPy compares with Python ints exactly
    elif kind == "O":  # Python ints beyond int64, or a mix: element by element
        try:
            bad = np.asarray([not held_scalar(v) for v in flat.tolist()], bool)
        except (TypeError, ValueError, OverflowError):
            return None
    elif kind in "US":
        return 0, flat[0] if flat.size else value
    else:
        return None
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return i, flat[i].item() if hasattr(flat[i], "item") else flat[i]


def held_scalar(v: Any) -> bool:
    """Whether JAX's 32-bit mode holds one Python number exactly (int32, or float32)."""
    if isinstance(v, bool | np.bool_):
        return True
    if isinstance(v, int | np.integer):
        return -(2**31) <= int(v) <= 2**31 - 1
    f = float(v)
    with np.errstate(over="ignore", under="ignore"):
        return bool(np.isnan(f) or float(np.float32(f)) == f)


def wide(
    func: str,
    x: Any,
    positions: dict[str, Any],
    computes: bool = False,
    others: dict[str, Any] | None = None,
    traced_ok: bool = False,
) -> bool:
    """Whether a call resolves its positions as in 64-bit mode (see the module docstring).

    ``positions``: the arguments, besides ``x``, that the function computes with (arithmetic
    on them, or a cast that would round them); bounds that are only compared need not be
    listed (the resolver's keys compare them exactly). ``computes``: the function computes
    with ``x`` itself (``x - width``, distances, window starts), which for float64 ``x`` is
    float64 arithmetic, as in 64-bit mode and in pandas, also where float32 holds every
    value (when nothing is traced). ``others``: the arguments computed with in x's own
    dtype (widths, steps: eagerly as under ``jit``), which only must not be traced when the
    call is resolved on the host. ``traced_ok``: the caller can trace its resolution in
    :func:`positions64` (the resolvers); else a TypeError is raised when ``x`` cannot be held
    and a position or one of ``others`` is traced.
    """
    if computes:
        check_normal(func, x)
    if x64():
        return False
    if is_traced(x):
        return False  # traced x is JAX's already; concrete bounds are compared exactly
    x_bad = unheld(x)
    bad = [n for n, v in positions.items() if not is_traced(v) and unheld(v) is not None]
    everything = {**positions, **(others or {})}
    traced = [n for n, v in everything.items() if is_traced(v)]
    if computes and not traced and host64(x) and np.asarray(x).dtype.kind == "f":
        return True
    if x_bad is None and not bad:
        return False
    if traced and not traced_ok:
        what = describe("x", x, x_bad) if x_bad is not None else describe(bad[0], positions[bad[0]])
        raise TypeError(
            f"{func}: {what}, which JAX's 32-bit mode cannot hold exactly, and "
            f"`{traced[0]}` is traced: in 32-bit mode such positions are resolved exactly on "
            "the host, with every position concrete. Enable 64-bit mode "
            "(`jax.config.update('jax_enable_x64', True)`), or pass concrete positions, or "
            "positions float32 holds (e.g. x - x[0], the bounds shifted likewise)"
        )
    return True


def check_normal(func: str, x: Any) -> None:
    """Concrete float host ``x`` a function computes with must hold no subnormal number: XLA
    flushes them to zero in arithmetic (on the CPU, and on GPUs), so ``x - width``, hopping
    starts or time gaps would be silently wrong; comparisons alone (``select``, bins) are
    exact on any float (the resolver's integer keys), so only computing functions check."""
    if isinstance(x, jax.Array) or is_traced(x) or time_kind(x) is not None:
        return
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        return
    if arr.dtype.kind != "f" or arr.size == 0:
        return
    tiny = np.finfo(arr.dtype).tiny
    with np.errstate(invalid="ignore"):
        if all_blocks(lambda c: not np.any((np.abs(c) < tiny) & (c != 0)), arr):
            return
    with np.errstate(invalid="ignore"):
        sub = (arr != 0) & (np.abs(arr) < np.finfo(arr.dtype).tiny)
    if sub.any():
        i = int(np.argmax(sub.reshape(-1)))
        raise ValueError(
            f"{func}: `x` holds the subnormal number {arr.reshape(-1)[i].item()!r} (at flat "
            f"index {i}); XLA flushes subnormals to zero in arithmetic, so the windows "
            "computed from them would be wrong: scale x first (e.g. x * 2**600)"
        )


def describe(name: str, value: Any, bad: tuple[int, Any] | None = None) -> str:
    """``"`x` holds 1700000000.5 (at flat index 1)"``, or ``"`x` is a time axis"``."""
    if time_kind(value) is not None or isinstance(value, str):
        return (
            f"`{name}` is a time axis (int64 nanoseconds)"
            if name == "x"
            else (f"`{name}` holds dates/durations")
        )
    bad = bad or unheld(value)
    if bad is None:
        return f"`{name}`"
    return f"`{name}` holds {bad[1]!r} (at flat index {bad[0]})"


def x64_scope() -> Any:
    """``jax.enable_x64(True)`` (jax >= 0.8), or the same config state of jax 0.7."""
    scope: Any = getattr(jax, "enable_x64", None)
    if scope is None:  # pragma: no cover - jax 0.7 keeps the state under jax._src.config
        from jax._src import config

        scope = config.enable_x64
    return scope(True)


@contextlib.contextmanager
def positions64() -> Iterator[None]:
    """Run the enclosed resolution as in JAX's 64-bit mode, eagerly (also when called while
    a ``jit`` of the caller's is being traced: concrete positions are then computed at trace
    time, and their results are constants of that program)."""
    with x64_scope(), jax.ensure_compile_time_eval():
        yield


def narrow(tree: Any) -> Any:
    """The JAX arrays of ``tree`` in the dtypes of JAX's 32-bit mode (int64 -> int32 ...).

    Called outside :func:`positions64` on what it returned: index ranges and indices, which
    int32 holds (every index of an array of the 32-bit mode); a value that int32 cannot hold
    raises instead of wrapping. NumPy arrays and Python values stay as they are.
    """

    def one(a: Any) -> Any:
        if is_traced(a):  # a resolution traced in positions64: int64 indices fit int32
            target = np.dtype(jax.dtypes.canonicalize_dtype(a.dtype))
            return a if target == a.dtype else a.astype(target)
        if not isinstance(a, jax.Array):
            return a
        h = np.asarray(a)
        target = np.dtype(jax.dtypes.canonicalize_dtype(h.dtype))
        if target == h.dtype:
            return a
        if h.dtype.kind in "iu":
            info = np.iinfo(target)
            if h.size and (h.min() < info.min or h.max() > info.max):
                raise ValueError(
                    f"a result holds {h.max()!r}, outside the {target} of JAX's 32-bit mode"
                )
        return jax.device_put(h.astype(target))

    return jax.tree_util.tree_map(one, tree)


def exact_positions(
    *names: str, computes: bool = False, others: tuple[str, ...] = ()
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a resolver of ``x`` (its first parameter; the caller's name in its ``func``
    parameter) whose result holds only index ranges or indices (:class:`~jaxsubset.Ranges`,
    ``nearest``): when :func:`wide` says so, it runs in :func:`positions64` and its result
    is narrowed.

    ``names``, ``computes``, ``others``: see :func:`wide`.
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(f)
        default = sig.parameters["func"].default if "func" in sig.parameters else f.__name__

        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            if x64() and not computes:  # (computing functions check x for subnormals)
                return f(*args, **kwargs)
            given = sig.bind(*args, **kwargs).arguments
            func = given.get("func", default)
            func = func if isinstance(func, str) else f.__name__
            x = next(iter(given.values()))
            watch = {n: given.get(n) for n in others}
            if not wide(func, x, {n: given.get(n) for n in names}, computes, watch, True):
                return f(*args, **kwargs)
            with positions64():
                out = f(*args, **kwargs)
            return narrow(out)

        return run

    return decorate


def exact_subsets(
    resolver: Callable[..., Any],
    gather: Callable[..., Any],
    *names: str,
    computes: bool = False,
    others: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a constructor ``f(x, y, *args, capacity, **kwargs)`` that is ``resolver(x,
    *args, **kwargs)`` (a :func:`exact_positions` function) followed by the gather: when
    :func:`wide` says so, the ranges come from the resolver (exact) and ``x``/``y`` are
    gathered by ``gather`` (:func:`jaxsubset.gather`) as JAX holds them (``Subsets.x`` of
    float64 ``x`` is float32; a time axis needs 64-bit mode for its ``Subsets.x`` of int64
    nanoseconds and is refused by the gather).
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(f)

        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            if x64() and not computes:  # (computing functions check x for subnormals)
                return f(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)
            given = dict(bound.arguments)
            func = f.__name__
            x, y = given.pop("x"), given.pop("y")
            watch = {n: given.get(n) for n in others}
            if not wide(func, x, {n: given.get(n) for n in names}, computes, watch, True):
                return f(*args, **kwargs)
            return gathered(func, resolver, gather, x, y, given)

        return run

    return decorate


def gathered(
    func: str,
    resolver: Callable[..., Any],
    gather: Callable[..., Any],
    x: Any,
    y: Any,
    given: dict,
) -> Any:
    """The exact ranges of ``resolver`` gathered into Subsets (see :func:`exact_subsets`)."""
    capacity = static_int(given.pop("capacity"), "capacity", func)
    xs, ys = as_xy(x, y, func)  # a time axis: refused here (Subsets.x would be nanoseconds)
    return gather(xs, ys, resolver(x, **given, func=func), capacity=capacity)


def held_in(value: np.ndarray, dtype: Any) -> bool:
    """Whether concrete float ``value`` keeps every value in ``dtype`` (NaN aside); integers
    and other kinds are the resolver's to check."""
    v = np.asarray(value)
    if v.dtype.kind != "f" or np.dtype(dtype).kind != "f" or v.size == 0:
        return True
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        back = v.astype(dtype).astype(v.dtype)
    return bool(np.all((back == v) | np.isnan(v)))


def host64(x: Any) -> bool:
    """Whether ``x`` is concrete host data of a 64-bit (or wider) numeric dtype."""
    if isinstance(x, jax.Array) or is_traced(x) or time_kind(x) is not None:
        return False
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError):
        return False
    return arr.dtype.kind in "iufO" and arr.dtype.itemsize >= 8


def binned_wide(func: str, x: Any, bins: Any, rng: Any) -> bool:
    """:func:`wide` for ``binned_statistic``: SciPy's edges are float64 for integer ``x``
    and take float ``x``'s dtype, so 64-bit or integer host ``x`` is binned as in 64-bit
    mode when it, the edges or the ``range`` (or the equal bins over it) are not held
    exactly by the 32-bit dtypes (the edges of integer x: by float32)."""
    if x64() or not (host64(x) or host_int(x)):
        return wide(func, x, {})
    if is_traced(bins) and np.ndim(bins) == 0:
        return False  # a traced number of bins: refused by name further on
    positions = {"range": rng}
    if isinstance(bins, int | np.integer) and not isinstance(bins, bool | np.bool_):
        arr = np.asarray(x)
        lo_hi = rng if rng is not None else ((arr.min(), arr.max()) if arr.size else None)
        if lo_hi is not None and not is_traced(lo_hi) and int(bins) > 0:
            with contextlib.suppress(TypeError, ValueError):
                lo, hi = (float(v) for v in np.asarray(lo_hi, dtype=object).reshape(-1)[:2])
                if lo == hi:  # SciPy widens an empty range by half a unit each side
                    lo, hi = lo - 0.5, hi + 0.5
                if np.isfinite(lo) and np.isfinite(hi):
                    positions["edges"] = np.linspace(lo, hi, min(int(bins), 1 << 20) + 1)
    elif not isinstance(bins, str) and not is_traced(bins):
        with contextlib.suppress(TypeError, ValueError):
            positions["bins"] = np.asarray(bins, dtype=float)  # the edges are floats
    return wide(func, x, positions, others={"bins": bins})


def host_int(x: Any) -> bool:
    """Whether ``x`` is concrete host data of an integer (or bool) dtype."""
    if isinstance(x, jax.Array) or is_traced(x) or time_kind(x) is not None:
        return False
    try:
        return np.asarray(x).dtype.kind in "biu"
    except (TypeError, ValueError):
        return False


def binned_exact(
    binned: Callable[..., Any], x: Any, values: Any, statistic: Any, bins: Any, rng: Any, **kw: Any
) -> Any:
    """``binned_statistic`` of positions that :func:`binned_wide` finds wide: the bin of
    every point (``binnumber``) and the edges as in 64-bit mode (:func:`positions64`), then
    the statistic of ``values`` as in any 32-bit call (values may be traced: ``grad``), over
    int32 stand-in positions: bin ``k`` (1 to ``nbins``) is ``k``, points below every bin
    ``0`` and points above (or NaN) ``nbins + 2``, binned by ``nbins`` equal bins over
    ``(1, nbins + 1)`` (whole edges ``1, 2, ..., nbins + 1``: bin ``k`` holds exactly the
    points numbered ``k``, and the number of bins is bucketed as any int ``bins``).
    ``bin_edges`` are the exact ones (float64, or datetime64 on a time axis, NumPy).

    Concrete float ``values`` (or None) and a named statistic take one call instead
    (:func:`binned_once`)."""
    once = binned_once(binned, x, values, statistic, bins, rng, **kw)
    if once is not None:
        return once
    with positions64():
        ref = binned(x, None, "count", bins, rng, x_sorted=kw.get("x_sorted"))
    d = np.asarray(ref.binnumber).astype(np.int64)
    nb = int(np.shape(ref.bin_edges)[0]) - 1
    stand_in = np.where(d > nb, nb + 2, d).astype(np.int32)
    res = binned(stand_in, values, statistic, nb, (1, nb + 1), **kw)
    return res._replace(bin_edges=ref.bin_edges, binnumber=d.astype(np.int32))


def binned_once(
    binned: Callable[..., Any], x: Any, values: Any, statistic: Any, bins: Any, rng: Any, **kw: Any
) -> Any:
    """:func:`binned_exact` in one call where it can be (:func:`once64`): concrete float
    ``values`` (or None) and a named statistic; the bins come from the exact positions and
    every bin's statistic from the same points in the same order as the stand-in call would.
    None (the caller takes two calls) for traced or non-float values or a callable
    statistic (run on what a 32-bit call hands it)."""
    if not isinstance(statistic, str):
        return None
    if values is None:  # "count": no values to take in the 32-bit mode's dtype
        with positions64():
            res = binned(x, None, statistic, bins, rng, **kw)
    else:
        res = once64(lambda v: binned(x, v, statistic, bins, rng, **kw), values, bins, rng)
    if res is None:
        return None
    return res._replace(statistic=narrow_host(res.statistic), binnumber=narrow_host(res.binnumber))


def values32(values: Any) -> Any:
    """Concrete float ``values`` in the dtype JAX's 32-bit mode holds them in (float64 ->
    float32, on the host), or None: traced, not a float array."""
    if is_traced(values):
        return None
    if isinstance(values, jax.Array):  # concrete: already in the mode's dtype
        return values if jnp.issubdtype(values.dtype, jnp.floating) else None
    try:
        host = np.asarray(values)
    except (TypeError, ValueError):
        return None
    if not jnp.issubdtype(host.dtype, jnp.floating):
        return None
    return host.astype(jax.dtypes.canonicalize_dtype(host.dtype), copy=False)


def once64(call: Callable[[Any], Any], values: Any, *others: Any) -> Any:
    """``call(values)`` of a public function whose positions 32-bit mode cannot hold, run
    whole as in 64-bit mode (:func:`positions64`) on ``values`` in the 32-bit mode's dtype
    (:func:`values32`), so every subset holds the points it holds in 64-bit mode and its
    statistic is of the values a 32-bit call holds; JAX results in the 32-bit mode's dtypes
    (:func:`narrow`). One call where resolving first and reducing in 32-bit mode takes two
    (and the reduction's road on int32 stand-ins, or index ranges, may be slower). None:
    ``values`` or one of ``others`` (bounds, widths) traced, or ``values`` not floats."""
    if any(is_traced(o) for o in jax.tree_util.tree_leaves(others)):
        return None
    v = values32(values)
    if v is None:
        return None
    with positions64():
        res = call(v)
    return narrow(res)


def narrow_host(a: Any) -> np.ndarray:
    """A host result in the 32-bit mode's dtype (float64 -> float32, int64 -> int32)."""
    h = np.asarray(a)
    return h.astype(jax.dtypes.canonicalize_dtype(h.dtype), copy=False)
