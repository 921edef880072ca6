"""Argument checks shared by every public function.

Static arguments (capacity, n, size, step, batch_size) are Python ints checked here in plain
Python, before tracing, with messages that name the function, the argument and the value.
Data-dependent facts (x sorted, no NaN) are checked eagerly when the data is concrete; under
``jit`` they cannot be, and the public functions document what happens instead.
"""

import operator
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._axis import (
    concrete_only,
    is_traced as is_traced,
    naive_utc,
    now_or_traced,
    traced_array as traced_array,
    x_to_ns,
)


CLOSED_VALUES = ("left", "right", "both", "neither")
NAN_POLICIES = ("propagate", "omit", "raise")


def static_int(
    value: Any, name: str, func: str, *, minimum: int = 1, maximum: int | None = None
) -> int:
    """Return ``value`` as a Python int in ``[minimum, maximum]`` or raise naming ``func`` and
    ``name``; ``maximum`` defaults to the largest index JAX holds in the current mode (int32's
    2**31-1 in the default 32-bit mode, int64's 2**63-1 with x64), so a static int never
    overflows later in a shape, an index or a traced scalar."""
    concrete_only(
        value,
        f"{func}: `{name}` must be a static Python int, got a traced value; it sets an array "
        f"shape, so pass it as a Python int (or mark it static with `static_argnames`)",
    )
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{func}: `{name}` must be a Python int, got {value!r}")
    try:
        as_int = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{func}: `{name}` must be a Python int, got {value!r} of type {type(value).__name__}"
        ) from None
    if as_int < minimum:
        kind = "positive" if minimum == 1 else f">= {minimum}"
        raise ValueError(f"{func}: `{name}` must be a {kind} int, got {as_int}")
    if maximum is None:
        x64 = bool(jax.config.read("jax_enable_x64"))
        maximum = 2**63 - 1 if x64 else 2**31 - 1
        limit = "2**63-1 (int64)" if x64 else "2**31-1 (int32 in JAX's default 32-bit mode)"
    else:
        limit = str(maximum)
    if as_int > maximum:
        raise ValueError(f"{func}: `{name}` must be at most {limit}, got {as_int}")
    return as_int


def check_choice(value: Any, name: str, choices: tuple[str, ...], func: str) -> str:
    """Return ``value`` if it is one of ``choices``, else raise naming the argument."""
    if value not in choices:
        raise ValueError(
            f"{func}: `{name}` must be one of {', '.join(map(repr, choices))}, got {value!r}"
        )
    return value


def check_closed(closed: Any, func: str) -> str:
    """Validate a ``closed`` argument against the pandas names."""
    return check_choice(closed, "closed", CLOSED_VALUES, func)


def check_nan_policy(nan_policy: Any, func: str) -> str:
    """Validate a ``nan_policy`` argument against SciPy's names."""
    return check_choice(nan_policy, "nan_policy", NAN_POLICIES, func)


def as_x(x: Any, func: str, keep_host: bool = False) -> jax.Array:
    """Return ``x`` as a 1-D JAX array (numeric), raising a clear error otherwise.

    ``keep_host``: concrete numeric ``x`` stays NumPy's (in the mode's dtype, see
    :func:`host_array`), for a caller that copies it once more anyway (eager buckets)."""
    arr = now_or_traced(x, lambda v: host_x(v, func, keep_host), traced_x)
    if arr.ndim != 1:
        raise ValueError(f"{func}: `x` must be 1-D, got shape {tuple(arr.shape)}")
    return arr


def traced_x(x: Any) -> jax.Array:
    """Traced ``x`` as one array; bool positions as the integers 0/1 (as concrete ones)."""
    arr = traced_array(x)
    return arr.astype(jnp.uint8) if arr.dtype == jnp.bool_ else arr


def host_x(x: Any, func: str, keep_host: bool = False) -> jax.Array:
    """Concrete ``x`` checked on the host (numeric, held by the mode) and put on the device
    (``keep_host``: a numeric axis kept on the host, :func:`host_array`)."""
    np_x = np.asarray(naive_utc(x))  # timezone-aware dates: their UTC instants
    numeric = np_x.dtype.kind in "biuf"
    if np_x.dtype.kind in "mM":
        np_x = x_to_ns(np_x, func)  # a time axis: exact int64 nanoseconds
    elif np_x.dtype.kind not in "biuf":
        raise TypeError(
            f"{func}: `x` must be numeric, got dtype {np_x.dtype}"
            + (
                " (bfloat16 holds 3 significant digits, too few for positions: convert x "
                "to float16, float32 or float64; bfloat16 values are fine as y)"
                if jnp.issubdtype(np_x.dtype, jnp.floating)
                else ""
            )
        )
    check_int_fits(np_x, "x", func)
    if np_x.dtype.kind == "b":  # positions False/True: the integers 0/1, as NumPy orders them
        np_x = np_x.astype(np.uint8)
    if keep_host and numeric:
        return host_array(x, np_x)
    return device_array(x, np_x)


def host_array(value: Any, host: np.ndarray) -> Any:
    """Concrete data kept on the host in the dtype :func:`device_array` would give it (a JAX
    array stays as it is): for an eager caller that pads it into a new array anyway, where
    putting it on the device first would cost a copy (of fresh, page-faulting memory) more.
    """
    if isinstance(value, jax.Array):
        return value
    return host.astype(jax.dtypes.canonicalize_dtype(host.dtype), copy=False)


def on_device(value: Any) -> jax.Array:
    """A value :func:`host_array` kept on the host, put on the device (anything else as it
    is): for the roads after an eager caller's decision not to pad it."""
    if isinstance(value, np.ndarray):
        return jax.device_put(value)
    return value


def device_array(value: Any, host: np.ndarray) -> jax.Array:
    """Concrete data as a JAX array without compiling anything.

    A JAX array stays as it is; anything else is ``jax.device_put`` of its NumPy form ``host``
    (the same dtype as ``jnp.asarray``, which compiles a small program per new shape and dtype:
    a new data length would cost a compilation before any work). Inside ``jit`` too the result
    is concrete (as a closed-over JAX array is), so NumPy and JAX constants take one path.
    """
    if isinstance(value, jax.Array) and value.dtype == host.dtype:
        return value
    with jax.ensure_compile_time_eval():
        return jax.device_put(host)


def check_int_fits(values: np.ndarray, name: str, func: str) -> None:
    """Raise if integer ``values`` do not fit the dtype JAX would give them in this mode.

    ``jnp.asarray`` silently truncates (int64 epoch milliseconds become garbage int32 in the
    default 32-bit mode), so positions that would change are an error naming the argument.
    """
    if values.dtype.kind not in "iu" or values.size == 0:
        return
    target = np.dtype(jax.dtypes.canonicalize_dtype(values.dtype))
    if target.itemsize >= values.dtype.itemsize:
        return
    info = np.iinfo(target)
    bad = (values < info.min) | (values > info.max)
    if bad.any():
        i = int(np.argmax(bad.ravel()))
        raise ValueError(
            f"{func}: `{name}` holds {values.ravel()[i].item()!r} (at flat index {i}), outside "
            f"the {target} range [{info.min}, {info.max}] of JAX's 32-bit mode, where it would "
            f"wrap; enable it with `jax.config.update('jax_enable_x64', True)`"
            + (" or subtract an offset first" if name == "x" else "")
        )


def as_xy(x: Any, y: Any, func: str, keep_host: bool = False) -> tuple[jax.Array, jax.Array]:
    """Return ``(x, y)`` as JAX arrays with ``len(y) == len(x)`` or raise (``keep_host``:
    concrete numeric ones stay NumPy's, see :func:`host_array`, for an eager caller that
    pads them into new arrays anyway)."""
    x = as_x(x, func, keep_host)

    def now(y: Any) -> jax.Array:
        np_y = np.asarray(y)
        # bfloat16 (an ml_dtypes extension type, NumPy kind "V") is a float like float16
        if np_y.dtype.kind not in "biufc" and not jnp.issubdtype(np_y.dtype, jnp.floating):
            raise TypeError(f"{func}: `y` must be numeric, got dtype {np_y.dtype}")
        check_int_fits(np_y, "y", func)  # int64 in 32-bit mode: jnp.asarray would wrap it
        return host_array(y, np_y) if keep_host else device_array(y, np_y)

    y = now_or_traced(y, now)
    if y.ndim < 1:
        raise ValueError(f"{func}: `y` must have a leading axis of length len(x), got a scalar")
    if y.shape[0] != x.shape[0]:
        raise ValueError(
            f"{func}: `x` and `y` must have the same length along the first axis, "
            f"got len(x)={x.shape[0]} and y.shape={tuple(y.shape)}"
        )
    return x, y


def unsorted_x(func: str, i: int, a: Any, b: Any) -> ValueError:
    """THE error for concrete ``x`` that is not sorted, ``x[i] = a > x[i + 1] = b``: every host
    check of the rule (here, ``stream``'s blocks) raises this one message."""
    return ValueError(
        f"{func}: `x` must be sorted ascending, but x[{i}]={a!r} > x[{i + 1}]={b!r}; "
        "sort (x, y) by x first (e.g. with np.argsort(x))"
    )


def nan_in_x(func: str, i: int, total: int | None = None) -> ValueError:
    """THE error for concrete ``x`` holding NaN, the first at index ``i`` (``total``: how
    many, where the whole of ``x`` is known)."""
    many = "" if total is None else f" ({total} NaN in total)"
    return ValueError(
        f"{func}: `x` holds NaN at index {i}{many}; a point with no position cannot be placed"
    )


def check_sorted_x(x: jax.Array, func: str) -> None:
    """Raise ``ValueError`` if concrete ``x`` holds NaN or is not sorted ascending.

    A traced ``x`` is not checked (its values are unknown at trace time); see
    :func:`jaxsubset.check_sorted` for a check that runs inside ``jit``.
    """
    now_or_traced(x, lambda v: host_sorted_x(np.asarray(v), func))


HOST_BLOCK = 1 << 15  # points per block of a host check: its temporaries stay in cache


def all_blocks(test: Callable[[np.ndarray], Any], a: np.ndarray, overlap: int = 0) -> bool:
    """Whether ``test`` (an elementwise predicate reduced to a bool) holds on every block
    of flat ``a``, each block read with the ``overlap`` points after it; it stops at the
    first block that fails. The caller's whole-array check (its error message) runs only
    then: on large data a check in one piece writes temporaries as big as ``a`` (fresh
    pages: 25-70 ms of an eager call at 1e7 points) where these stay in cache."""
    flat = a.reshape(-1)
    return all(
        bool(test(flat[i : i + HOST_BLOCK + overlap])) for i in range(0, flat.size, HOST_BLOCK)
    )


def _sorted_block(c: np.ndarray) -> bool:
    """Ascending and (for floats) NaN-free: every comparison with a NaN is False."""
    return bool(np.greater_equal(c[1:], c[:-1]).all())


def host_sorted_x(np_x: np.ndarray, func: str) -> None:
    """:func:`check_sorted_x` of host ``x``."""
    if np_x.size > 1 and all_blocks(_sorted_block, np_x, overlap=1):
        return  # (a NaN fails some comparison: two points at least)
    if np_x.dtype.kind == "f":
        nan = np.isnan(np_x)
        if nan.any():
            raise nan_in_x(func, int(np.argmax(nan)), int(nan.sum()))
    if np_x.size > 1:
        bad = np_x[1:] < np_x[:-1]
        if bad.any():
            i = int(np.argmax(bad))
            raise unsorted_x(func, i, np_x[i].item(), np_x[i + 1].item())


def as_int_bounds(value: Any, name: str, func: str) -> jax.Array:
    """Return an index bound as an integer JAX array (``None`` is handled by the caller)."""

    def now(value: Any) -> jax.Array:
        if np.asarray(value).dtype.kind not in "iu":
            raise TypeError(
                f"{func}: `{name}` must hold integers, got dtype {np.asarray(value).dtype}"
            )
        check_int_fits(np.asarray(value), name, func)  # jnp.asarray would wrap it
        return jnp.asarray(value)

    arr = now_or_traced(value, now, traced_array)
    if not jnp.issubdtype(arr.dtype, jnp.integer):
        raise TypeError(f"{func}: `{name}` must hold integers, got dtype {arr.dtype}")
    return arr


def index_dtype():
    """The integer dtype used for start/count: int64 when x64 is enabled, else int32."""
    return jnp.int64 if jax.config.jax_enable_x64 else jnp.int32
