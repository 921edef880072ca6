"""The x axis: numeric or time, bound/width coercion, periods and calendar/fixed/equal edges.

JAX has no datetime dtype, so a time axis is converted ONCE to int64 nanoseconds since the epoch
(no float rounding of large epochs: float64 seconds cannot hold nanoseconds near 2e9 s). Bounds
given as dates and widths given as durations are converted the same way; results that report x
positions go back to ``datetime64`` with :func:`to_datetime64`. int64 needs JAX's 64-bit mode.
Every constructor and statistic coerces its bounds and widths here (:func:`concrete_bound`,
:func:`bound_array`, :func:`window_width`): exact, never wrapped by JAX's 32-bit integers,
and a plain number on a time axis (which would silently mean nanoseconds) is an error.

Periods (``"1M"``, ``"1Q"``, ``"1Y"``, ``"7D"``, ``"12h"``) are parsed in ``_periods``
(:func:`jaxsubset._base.parse_period`) and turned into bin edges on the host from concrete x
(:func:`bin_edges`): the library's ``bins="1M"`` and the command's ``--bins 1M`` both come
from this one place, with pandas ``resample``'s bins.
"""

import datetime as _dt
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._base import (  # periods and duration units, without JAX (the command's checks)
    DAY_NS,
    DURATION,
    MAX_NS,
    PeriodError,
    duration_ns,
    read_period,
)
from ._trace import concrete_only, is_traced as is_traced, now_or_traced
from ._typing import Array, ArrayLike


# datetime64[ns] holds 1677-09-21 .. 2262-04-11; outside that nanoseconds overflow int64.
NS_MIN = np.datetime64("1677-09-22", "s")
NS_MAX = np.datetime64("2262-04-10", "s")


def traced_array(value: Any) -> jax.Array:
    """A traced value (a tracer, or a list of them) as one JAX array.

    A tracer is returned as it is; a list or tuple holding tracers (``[lo, hi]`` built inside
    ``jit``) is stacked by ``jnp.asarray``, so its ``dtype``/``ndim`` can be read.
    """
    return value if isinstance(value, jax.Array) else jnp.asarray(value)


def time_kind(value: Any) -> str | None:
    """``"M"`` for datetime64 data, ``"m"`` for timedelta64 data, else None (never traced)."""
    if isinstance(value, jax.core.Tracer | jax.Array):
        return None
    if isinstance(value, np.datetime64 | _dt.datetime | _dt.date):
        return "M"
    if isinstance(value, np.timedelta64 | _dt.timedelta):
        return "m"
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(value).dtype
        except (TypeError, ValueError):
            return None
    kind = np.dtype(dtype).kind if not hasattr(dtype, "kind") else dtype.kind
    return kind if kind in "Mm" else None


def naive_utc(value: Any) -> Any:
    """Timezone-aware dates (a pandas ``DatetimeIndex``/``Series``/``Timestamp``, a
    ``datetime`` with ``tzinfo``) as their instants in UTC, naive: a time axis holds UTC
    nanoseconds (as the command reads ``+01:00``). Anything else is returned as it is."""
    if getattr(getattr(value, "dtype", None), "tz", None) is not None:
        return np.asarray(
            value.dt.tz_convert(None) if hasattr(value, "dt") else value.tz_convert(None)
        )
    if isinstance(value, _dt.datetime) and value.tzinfo is not None:
        return value.astimezone(_dt.UTC).replace(tzinfo=None)
    return value


def require_x64(func: str) -> None:
    if not jax.config.read("jax_enable_x64"):
        raise TypeError(
            f"{func}: `x` is a time axis, whose positions here would be int64 nanoseconds "
            "(e.g. `Subsets.x`), which needs JAX's 64-bit mode: call "
            "`jax.config.update('jax_enable_x64', True)` at start-up. In 32-bit mode the "
            "statistics (rolling_statistic, binned_statistic, ewm_statistic, range_statistic "
            "of jaxsubset.ranges), jaxsubset.ranges and nearest take dates exactly"
        )


def as_kind(value: Any, convert: Any, kind: str) -> np.ndarray:
    """``value`` as a NumPy array of dtype kind ``kind``; Python objects (``datetime``, pandas
    ``Timestamp``/``Timedelta``) converted one by one with ``convert``. TypeError otherwise."""
    if hasattr(value, "dtype") and not isinstance(value, _dt.datetime | _dt.timedelta):
        arr = np.asarray(value)
        if arr.dtype == object:  # Python objects in an array (tz-aware Timestamps)
            return (
                as_kind(arr.tolist(), convert, kind)
                if arr.ndim
                else as_kind(arr.item(), convert, kind)
            )
    else:
        obj = np.asarray(value, dtype=object)
        arr = np.asarray([convert(v) for v in obj.ravel()]).reshape(obj.shape)
    if arr.dtype.kind != kind:
        raise TypeError(f"expected dtype kind {kind!r}, got {arr.dtype}")
    return arr


def datetime_to_ns(value: Any, name: str, func: str) -> np.ndarray:
    """Dates (datetime64, ``datetime``, ISO strings, pandas Timestamps) as int64 nanoseconds;
    timezone-aware ones at their UTC instants (:func:`naive_utc`)."""
    value = naive_utc(value)
    try:
        if isinstance(value, str) or (isinstance(value, np.ndarray) and value.dtype.kind == "U"):
            arr = np.asarray(value, dtype="datetime64[ns]")
        else:
            arr = as_kind(value, lambda v: np.datetime64(naive_utc(v)), "M")
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: `{name}` must be dates (numpy.datetime64 or ISO strings) on a time axis, "
            f"got {value!r}"
        ) from None
    if np.isnat(arr).any():
        raise ValueError(f"{func}: `{name}` holds NaT (a missing date); a date must be known")
    if arr.dtype == np.dtype("datetime64[ns]"):  # int64 ns already: every date fits
        return arr.view(np.int64).copy()  # (a copy, as the conversion below makes)
    coarse = arr.astype("datetime64[s]")
    if (coarse < NS_MIN).any() or (coarse > NS_MAX).any():
        raise ValueError(
            f"{func}: `{name}` holds dates outside 1677-09-22 .. 2262-04-10, which int64 "
            "nanoseconds cannot represent"
        )
    return arr.astype("datetime64[ns]").view(np.int64)


def timedelta_to_ns(value: Any, name: str, func: str) -> np.ndarray:
    """Durations (timedelta64, ``timedelta``, pandas Timedelta, "7D", "1h") as int64 ns."""
    if isinstance(value, str):
        return duration_ns(value, name, func)
    try:
        arr = as_kind(value, np.timedelta64, "m")
        if np.datetime_data(arr.dtype)[0] == "generic":
            raise TypeError("a duration without a unit")  # np.timedelta64(7): a bare number
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}: `{name}` must be a duration on a time axis (numpy.timedelta64 or a string "
            f"such as '7D'), got {value!r}; a plain number would be read as nanoseconds"
        ) from None
    if np.isnat(arr).any():
        raise ValueError(f"{func}: `{name}` holds NaT (a missing duration)")
    return arr.astype("timedelta64[ns]").view(np.int64)


def int_limits(dtype: Any) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype, as Python ints."""
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


# ------------------------------------------------------------ bounds and widths on either axis
def concrete_bound(
    value: Any,
    name: str,
    x: Array | np.ndarray | None,
    func: str,
    time: str | None,
    width: bool = False,
) -> np.ndarray:
    """A concrete bound as an exact NumPy array (dates/durations as int64 nanoseconds).

    ``x`` is not read (``time`` says what the axis is): streamed data pass None.
    """
    if time is not None:
        if width or time == "m":
            value = timedelta_to_ns(value, name, func)
        else:
            value = datetime_to_ns(value, name, func)
    elif time_kind(value) is not None or isinstance(value, str):
        raise TypeError(
            f"{func}: `{name}` is a date/duration ({value!r}) but `x` is not a time axis"
        )
    v = np.asarray(value)
    if v.dtype == object:
        flat = v.ravel().tolist()
        if not all(isinstance(e, int) for e in flat):
            raise TypeError(f"{func}: `{name}` must be numeric, got {value!r}")
    elif v.dtype.kind not in "biuf":
        raise TypeError(f"{func}: `{name}` must be numeric, got dtype {v.dtype}")
    if v.dtype.kind == "f" and np.isnan(v).any():
        raise ValueError(f"{func}: `{name}` holds NaN; a bound must be a number")
    return v


def bound_array(
    value: ArrayLike,
    name: str,
    x: Array,
    func: str,
    time: str | None = None,
    width: bool = False,
) -> Array:
    """An x-value bound (or a width) as an array comparable with ``x``.

    On a time axis (``time`` is ``"M"``/``"m"``) dates and durations become int64 nanoseconds
    like ``x``; a plain number there is an error (it would silently mean nanoseconds). A traced
    bound is taken as already converted.
    """

    def now(v: Any) -> Array:
        host = concrete_bound(v, name, x, func, time, width)
        arr = exact_array(host, name, func)
        dtype = jnp.promote_types(x.dtype, arr.dtype)
        if arr.dtype == dtype:
            return arr
        # on the host: no program per shape (converted from the host value: inside a trace
        # `arr` may be staged already)
        return jax.device_put(np.asarray(host).astype(dtype))

    def traced(v: Any) -> Array:
        arr = jnp.asarray(v)  # a tracer already: no copy, no conversion
        return arr.astype(jnp.promote_types(x.dtype, arr.dtype))

    return now_or_traced(value, now, traced)


def exact_array(v: np.ndarray, name: str, func: str) -> Array:
    """A concrete numeric array as a JAX array, raising where JAX's dtype would wrap it.

    ``jnp.asarray`` truncates integers to the mode's width (int64 2**32 becomes 0 in 32-bit
    mode); a value that does not fit is an error naming the argument instead.
    """
    if v.dtype == object or v.dtype.kind in "iu":
        v = np.asarray(v)
        target = np.dtype(jax.dtypes.canonicalize_dtype(np.int64 if v.dtype == object else v.dtype))
        lo, hi = int_limits(target)
        x64 = bool(jax.config.read("jax_enable_x64"))
        if v.size and (np.any(v < lo) or np.any(v > hi)):
            raise ValueError(
                f"{func}: `{name}` holds {v.ravel()[np.argmax((v < lo) | (v > hi))]!r}, outside "
                f"the {target} range that JAX's "
                f"{'64' if x64 else '32'}-bit mode holds"
                + ("" if x64 else "; enable jax_enable_x64")
            )
        v = v.astype(target)
    elif np.asarray(v).dtype.kind == "f":  # 32-bit mode: a float64 beyond float32's range
        with np.errstate(over="ignore"):  # is +-inf there, as under jit (no warning)
            v = np.asarray(v).astype(jax.dtypes.canonicalize_dtype(np.asarray(v).dtype))
    return jax.device_put(np.asarray(v))  # no program per shape, unlike jnp.asarray


def window_width(
    value: Any, name: str, x: Array | np.ndarray | None, func: str, time: str | None
) -> Any:
    """A concrete width-like argument as an exact NumPy array (durations as int64 ns), >= 0;
    a traced one as one JAX array (checked at run time by the caller)."""

    def now(value: Any) -> np.ndarray:
        v = concrete_bound(value, name, x, func, time, width=True)
        if np.any(v < 0):
            raise ValueError(f"{func}: `{name}` must be >= 0, got {v.tolist()!r}")
        return v

    return now_or_traced(value, now, traced_array)


# ------------------------------------------------------------------------------ the time axis x
def x_to_ns(x: Any, func: str) -> np.ndarray:
    """A datetime64/timedelta64 x as int64 nanoseconds (checked for NaT and range)."""
    require_x64(func)
    x = naive_utc(x)
    if time_kind(x) == "m":
        return timedelta_to_ns(np.asarray(x), "x", func)
    arr = np.asarray(x)
    if np.isnat(arr).any():
        i = int(np.argmax(np.isnat(arr)))
        raise ValueError(
            f"{func}: `x` holds NaT at index {i}; a point with no position cannot be placed"
        )
    return datetime_to_ns(arr, "x", func)


def to_ns(values: Any) -> np.ndarray:
    """Dates or durations as int64 nanoseconds: the form a time axis takes inside ``jit``.

    The constructors accept ``datetime64`` x and date bounds directly when called eagerly;
    inside ``jit`` everything is an array of numbers, so convert once with this function.

    Args:
        values: ``numpy.datetime64``/``timedelta64`` values (any unit), ISO date strings,
            ``datetime``/``timedelta`` objects, or duration strings like ``"7D"``.

    Returns:
        ``numpy.ndarray`` of int64 nanoseconds (since the epoch for dates).

    Example:
        >>> import numpy as np, jaxsubset
        >>> jaxsubset.to_ns(np.array(["1970-01-01T00:00:01", "2001-12-29"], "datetime64[s]"))
        array([          1000000000, 1009584000000000000])
        >>> int(jaxsubset.to_ns("7D"))
        604800000000000
    """
    if time_kind(values) == "m" or (isinstance(values, str) and DURATION.match(values)):
        return timedelta_to_ns(values, "values", "to_ns")
    return datetime_to_ns(values, "values", "to_ns")


def to_datetime64(ns: Any) -> np.ndarray:
    """int64 nanoseconds since the epoch (e.g. ``Subsets.x`` of a time axis) as datetime64[ns].

    Args:
        ns: array of int64 nanoseconds.

    Returns:
        ``numpy.ndarray`` of ``datetime64[ns]``.

    Example:
        >>> import jaxsubset
        >>> jaxsubset.to_datetime64([1009584000000000000]).astype(str).tolist()
        ['2001-12-29T00:00:00.000000000']
    """
    arr = np.asarray(ns)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"to_datetime64: `ns` must hold integer nanoseconds, got dtype {arr.dtype}")
    return arr.astype(np.int64).view("datetime64[ns]")


# ------------------------------------------------------------------------------ periods and edges


def equal_edges(lo: int, hi: int, n: int) -> np.ndarray:
    """``n`` equal bins over ``[lo, hi]`` in exact integer nanoseconds: ``lo + span*i // n``.

    A single time (``lo == hi``) spans one second around it, as ``numpy.histogram`` widens
    an empty range by half a unit each side (the unit here: a second).
    """
    if hi == lo:
        lo, hi = lo - 5 * 10**8, hi + 5 * 10**8
    span = hi - lo  # a Python int: no int64 overflow for spans of centuries
    if n > 2**31:  # r * i below could overflow int64: exact Python ints instead
        return np.array([lo + span * i // n for i in range(n + 1)], dtype=np.int64)
    q, r = divmod(span, n)  # lo + span * i // n, exactly, without a product beyond int64
    i = np.arange(n + 1, dtype=np.int64)
    return lo + q * i + (r * i) // n


def too_many(k: int, max_bins: int | None, prefix: str) -> None:
    if max_bins is not None and k > max_bins:
        raise PeriodError(prefix, f"gives {k} bins over the data; choose a longer period")


def fixed_edges(x0: int, x1: int, width: int, max_bins: int | None, prefix: str) -> np.ndarray:
    """Bins of ``width`` ns covering ``[x0, x1]``: multiples of the width from midnight of the
    first day (pandas ``resample``'s ``origin="start_day"``), the last edge past ``x1``."""
    origin = x0 // DAY_NS * DAY_NS
    first = origin + (x0 - origin) // width * width
    k = (x1 - first) // width + 1
    too_many(k, max_bins, prefix)
    if first + k * width > MAX_NS:
        raise PeriodError(prefix, "the last bin ends after 2262-04-11 (int64 nanoseconds)")
    return first + width * np.arange(k + 1, dtype=np.int64)


def month_of(ns: int) -> int:
    """Months since 1970-01 of the date ``ns`` (int nanoseconds)."""
    return int(np.datetime64(int(ns), "ns").astype("datetime64[M]").astype(np.int64))


def calendar_edges(x0: int, x1: int, months: int, max_bins: int | None, prefix: str) -> np.ndarray:
    """Calendar bins of ``months`` months covering ``[x0, x1]`` (int64 ns): edges on Jan 1
    (whole years: pandas ``"YS"``), on the 1st of Jan/Apr/Jul/Oct (whole quarters: ``"QS"``),
    else on the 1st of the first point's month (``"MS"``); the last edge past ``x1``."""
    m0, m1 = month_of(x0), month_of(x1)
    if months % 12 == 0:
        m0 -= m0 % 12  # January (Python's % floors: right before 1970 too)
    elif months % 3 == 0:
        m0 -= m0 % 3  # the first month of a quarter
    k = (m1 - m0) // months + 1
    too_many(k, max_bins, prefix)
    edges = np.datetime64("1970-01", "M") + (m0 + months * np.arange(k + 1))
    if edges[-1] > np.datetime64("2262-04", "M"):
        raise PeriodError(prefix, "the last bin ends after 2262-04-11 (int64 nanoseconds)")
    if edges[0] < np.datetime64("1677-10", "M"):  # datetime64[ns] would wrap it to 2262
        raise PeriodError(prefix, "the first bin starts before 1677-09-22 (int64 nanoseconds)")
    return edges.astype("datetime64[ns]").view(np.int64)


def period_edges(
    x0: int, x1: int, period: str, prefix: str, max_bins: int | None = None
) -> np.ndarray:
    """The int64 ns edges of ``period`` bins covering the times ``[x0, x1]`` (int ns)."""
    kind, v = read_period(period, prefix)
    if kind == "calendar":
        return calendar_edges(x0, x1, v, max_bins, prefix)
    return fixed_edges(x0, x1, v, max_bins, prefix)


def bin_edges(x: Any, bins: int | str, *, max_bins: int | None = None) -> np.ndarray:
    """The bin edges of ``bins`` over the times ``x`` (any order), computed on the host.

    What ``binned_statistic(x, y, stat, bins="1M")``, ``bins(x, y, "1M", ...)`` and
    ``ranges.bins(x, "1M")`` use, and what the command's ``--bins 1M`` uses, as pandas
    ``Series(y, index=x).resample(...)`` bins them (every bin ``[e_k, e_{k+1})``, the last edge
    past the last point, empty bins kept):

    - ``"1M"``/``"MS"`` months from the 1st of the earliest time's month (pandas ``"MS"``);
      ``"3M"``/``"1Q"`` quarters from Jan 1/Apr 1/Jul 1/Oct 1 (``"QS"``; any multiple of 3
      months); ``"1Y"``/``"YS"`` years from Jan 1 (``"YS"``; any multiple of 12 months);
    - fixed durations (``"7D"``, ``"12h"``, ``"30min"``, ``"1W"`` = ``"7D"``): multiples of the
      width from midnight of the first day (``resample("7D")``, ``origin="start_day"``);
    - an int ``n``: ``n`` equal bins over ``[min(x), max(x)]`` in exact integer nanoseconds
      (``lo + span * k // n``; a single time spans the second around it, as the command's
      ``--bins N``).

    Args:
        x: ``(N,)`` ``numpy.datetime64`` positions (any unit), or int64 nanoseconds
            since the epoch (e.g. from :func:`to_ns`); concrete, ``N >= 1``.
        bins: a period (see :func:`parse_period`) or a number of equal bins.
        max_bins: refuse more bins than this (``None``: no limit).

    Raises:
        ValueError: a period :func:`parse_period` refuses, more than ``max_bins`` bins, edges
            beyond 2262-04-11 or before 1677-09-22 (int64 nanoseconds) (these three carry a
            ``reason`` attribute: the message without the ``bin_edges: `bins`=...`` prefix),
            empty ``x``.
        TypeError: traced ``x`` (inside ``jit``), ``x`` neither dates nor integers.

    Returns:
        ``(nbins + 1,)`` ``numpy.ndarray``: ``datetime64[ns]`` for datetime64 ``x``, int64
        nanoseconds for integer ``x``. It needs no 64-bit JAX mode (NumPy only).

    Example:
        >>> import numpy as np, jaxsubset
        >>> x = np.array(["2001-01-30", "2001-02-02", "2001-04-01"], "datetime64[D]")
        >>> jaxsubset.bin_edges(x, "1M").astype("datetime64[D]").astype(str).tolist()
        ['2001-01-01', '2001-02-01', '2001-03-01', '2001-04-01', '2001-05-01']
        >>> jaxsubset.bin_edges(x, "1Q").astype("datetime64[D]").astype(str).tolist()
        ['2001-01-01', '2001-04-01', '2001-07-01']
    """
    func = "bin_edges"
    concrete_only(
        x,
        f"{func}: the edges are computed on the host from concrete `x`, but `x` is traced "
        "(inside jit/vmap): compute them before, outside the traced function",
    )
    if max_bins is not None and (
        isinstance(max_bins, bool) or not isinstance(max_bins, int) or max_bins < 1
    ):
        raise TypeError(f"{func}: `max_bins` must be a positive int or None, got {max_bins!r}")
    arr = np.asarray(naive_utc(x))
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{func}: `x` must be a non-empty 1-D array, got shape {arr.shape}")
    kind = time_kind(arr)
    if kind == "M":
        ns = datetime_to_ns(arr, "x", func)
    elif kind is None and arr.dtype.kind in "iu":
        ns = arr.astype(np.int64)
    else:
        raise TypeError(
            f"{func}: `x` must be dates (numpy.datetime64) or int64 nanoseconds since the "
            f"epoch, got dtype {arr.dtype}"
        )
    lo, hi = int(ns.min()), int(ns.max())
    if isinstance(bins, str):
        edges = period_edges(lo, hi, bins, f"{func}: `bins`={bins!r}", max_bins)
    elif isinstance(bins, int | np.integer) and not isinstance(bins, bool | np.bool_):
        n = int(bins)
        if n < 1:
            raise ValueError(f"{func}: `bins` must be a period or a positive int, got {n}")
        too_many(n, max_bins, f"{func}: `bins`={n}")
        edges = equal_edges(lo, hi, n)
    else:
        raise TypeError(
            f"{func}: `bins` must be a period such as '1M', '1Q', '1Y', '7D' or an int, "
            f"got {bins!r}"
        )
    return edges.view("datetime64[ns]") if kind == "M" else edges
