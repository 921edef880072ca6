"""Shape buckets for eager calls: one compiled program serves many data lengths.

Called outside ``jit`` (every argument concrete), the statistics pad the data length N and
the number of ranges K up to a bucket size, run one jitted program per bucket (padding rows
are never inside a range, so they never enter a statistic), and slice the results back. Under
the user's own ``jit`` nothing changes: the shapes are the user's.

Buckets: every size up to ``2**13`` (8192) shares the bucket 8192 (N), every number of
ranges up to 64 the bucket 64 (K; N's buckets when there is one range per point); above, the
next of ``2**k * (1, 1.25, 1.5, 1.75)``: at most 25% padding, four buckets per doubling.
``JAXSUBSET_BUCKETS=off`` (read at every call) turns bucketing off.
"""

import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ._trace import eager
from ._typing import Array


MIN_N = 1 << 13
MIN_K = 64


def enabled() -> bool:
    """Whether eager calls are bucketed (``JAXSUBSET_BUCKETS=off`` turns it off)."""
    return os.environ.get("JAXSUBSET_BUCKETS", "on").strip().lower() not in ("off", "0", "no")


def bucketed(*values: Any) -> bool:
    """Whether a call with these inputs is bucketed: bucketing on and the call eager.

    :func:`jaxsubset._core._trace.eager` decides "eager" (concrete inputs outside every
    trace: inside ``jit`` even closed-over constants give staged results, which the bucketed
    path cannot read back).
    """
    return enabled() and eager(*values)


def bucket(n: int, minimum: int = MIN_N) -> int:
    """The bucket size of ``n``: ``minimum`` or the next ``2**k * (1, 1.25, 1.5, 1.75)``.

    Example:
        >>> [bucket(n) for n in (1, 1000, 8192, 8193, 10_000, 10**6)]
        [8192, 8192, 8192, 10240, 10240, 1048576]
    """
    if n <= minimum:
        return minimum
    k = (n - 1).bit_length() - 1  # 2**k < n <= 2**(k+1)
    for q in (5, 6, 7, 8):
        size = (q << k) // 4
        if size >= n:
            return size
    raise AssertionError("unreachable")  # pragma: no cover


def on_host(a: Any) -> bool:
    """Whether ``a`` is host data (NumPy, a Python sequence) or a CPU JAX array."""
    if not isinstance(a, jax.Array):
        return True
    return all(d.platform == "cpu" for d in a.devices())


def pad(a: Any, size: int, fill: Any = 0) -> Array:
    """``a`` (``(n, ...)``) padded with ``fill`` along its leading axis to ``size`` rows.

    On the host with NumPy (no compilation for a new ``n``): the rows are written once, into
    a new buffer of the JAX dtype that :func:`aligned_empty` aligns so that the CPU device
    takes it without a copy; on an accelerator with ``jnp.pad`` (one small program per new
    ``n``, never a copy through the host).
    """
    n = a.shape[0]
    if on_host(a):
        h = np.asarray(a)
        if n == size:  # jax.device_put, as jnp.asarray compiles a program per shape
            return jax.device_put(h)
        dt = np.dtype(jax.dtypes.canonicalize_dtype(h.dtype))
        out = aligned_empty((size,) + h.shape[1:], dt)
        out[:n] = h  # (a cast where the mode narrows, as device_put would)
        out[n:] = fill
        return jax.device_put(out)
    if n == size:
        return a
    widths = [(0, size - n)] + [(0, 0)] * (a.ndim - 1)
    return jnp.pad(a, widths, constant_values=fill)


ALIGN = 64  # bytes: the alignment XLA's CPU client needs to take a host buffer as it is


def aligned_empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A new NumPy array whose data starts on an :data:`ALIGN`-byte boundary.

    ``jax.device_put`` of such an array on the CPU aliases its memory instead of copying it
    (an 80 MB copy into fresh pages is ~40 ms of an eager call at 1e7 points); the callers
    write it once and never again, so the alias is as good as a copy.
    """
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.empty(nbytes + ALIGN, np.uint8)
    off = -raw.ctypes.data % ALIGN
    return raw[off : off + nbytes].view(dt).reshape(shape)


def put(h: np.ndarray) -> Array:
    """Host rows cut from a program's result on the device, in one copy at most.

    A contiguous cut that starts on an :data:`ALIGN`-byte boundary (the leading rows of a
    result) is taken as it is: the device array aliases the result's memory, which nothing
    writes again. Any other cut (the leading slots of every row, ``[:k, :cap]``) is copied
    once into an aligned buffer; ``jax.device_put`` of it would copy it into fresh memory
    of its own, about twice the time at 1e7 values.
    """
    if h.flags.c_contiguous and h.ctypes.data % ALIGN == 0:
        return jax.device_put(h)
    out = aligned_empty(h.shape, h.dtype)
    np.copyto(out, h)
    return jax.device_put(out)


def unpad(a: Array, n: int, shape: tuple[int, ...]) -> Array:
    """The first ``n`` rows of ``a``, reshaped to ``shape`` (on the host for CPU arrays)."""
    if on_host(a):
        return put(np.asarray(a)[:n].reshape(shape))
    return a[:n].reshape(shape)


def next_power_of_two(n: int) -> int:
    """The smallest power of two ``>= max(n, 1)``."""
    n = max(int(n), 1)
    return 1 << (n - 1).bit_length()
