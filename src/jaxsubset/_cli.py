"""The ``jaxsubset`` command: ``demo`` (the motivating example) and ``stats`` (files -> table).

Bad input never shows a traceback: every problem is one line on stderr and exit status 2, and no
output file is left behind (outputs go to a temporary file renamed into place at the very end,
removed on any error, Ctrl-C, SIGTERM or SIGHUP). Anything else is a bug: exit status 1 and one
line asking for a report (``--debug`` adds the traceback).
"""

import argparse
import contextlib
import functools
import inspect
import os
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from ._bigfile import streamed_statistics, wants_stream
from ._cache import command_cache
from ._io import (
    OUTPUT_SUFFIXES,
    XY,
    InputError,
    atomic_output,
    check_memory,
    check_output_path,
    format_value,
    is_iso_date,
    iso_strings,
    iso_unit,
    parse_dates,
    read_table,
    read_xy,
    to_numeric,
    to_time,
    write_table,
)


STATS = ("count", "sum", "mean", "std", "var", "min", "max", "median")
COUNTS = ("valid",)  # not a reduction: the number of real (non-missing) readings per subset
DEFAULT_STATS = "mean,std,min,max"
NAN_POLICIES = ("omit", "propagate", "raise")
MAX_BINS = 10_000_000  # a period bin spec over a long time axis must stay a sane table
_MAX_NS = 2**63 - 1  # the longest duration int64 nanoseconds hold
_MAX_MONTHS = 12 * 585  # longer than 1677..2262: no two dates of the axis are that far apart
# Memory per subset the table needs (bounds, the row's columns and the statistics' temporary
# arrays); the subsets a --chunks/--bins count asks for must fit in the free memory.
_BYTES_PER_SUBSET = 256
_DAY_NS = 86_400 * 10**9
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
FIGSIZE = (8.0, 4.5)  # inches; at DPI this is 800 x 450 pixels
DPI = 100


# ---------------------------------------------------------------------------- small pieces
class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _number_arg(convert: Any, minimum: float, what: str, maximum: float | None = None) -> Any:
    """An argparse ``type``: ``convert(text)`` checked to be ``>= minimum`` and, when given,
    ``<= maximum`` (NaN refused)."""

    def parse(text: str) -> Any:
        try:
            v = convert(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not v >= minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        if maximum is not None and not v <= maximum:
            raise argparse.ArgumentTypeError(
                f"expected {what} of at most {_MAX_TEXT.get(maximum, maximum)}, got {text!r}"
            )
        return v

    return parse


MAX_INT = 2**62  # counts, sizes and steps: beyond any data, and clear of int64 overflow
MAX_DDOF = 2**31 - 1  # a traced int32 in JAX's default mode
_MAX_TEXT = {MAX_INT: "2**62", MAX_DDOF: "2**31-1"}
_positive_int = _number_arg(int, 1, "a positive integer", MAX_INT)
_nonneg_int = _number_arg(int, 0, "an integer >= 0", MAX_DDOF)
_nonneg_float = _number_arg(float, 0.0, "a number >= 0")


_PERIOD = re.compile(r"^\s*([0-9]*\.?[0-9]+)?\s*([A-Za-z]+)\s*$")
_CALENDAR_MONTHS = {
    **dict.fromkeys(("Y", "YS", "YE", "A", "AS", "y", "year", "years"), 12),
    **dict.fromkeys(("Q", "QS", "QE", "q", "quarter", "quarters"), 3),
    **dict.fromkeys(("M", "MS", "ME", "mo", "month", "months"), 1),
}


def parse_period(text: str, option: str) -> tuple[str, int] | None:
    """A time period: ``("calendar", months)`` for ``1Y``/``3M``/``1Q``, ``("fixed", ns)`` for
    durations (``7D``, ``1h``, ``30min``, ``10s``, ``1W`` = ``7D``), None for other text.

    A calendar period takes a whole multiple; lower-case ``m`` is refused as ambiguous
    (``1M`` is a month, ``1min`` a minute).
    """
    from ._time import timedelta_to_ns

    m = _PERIOD.match(text)
    if m is None:
        return None
    amount, unit = m.group(1) or "1", m.group(2)
    if unit == "m":
        raise InputError(
            f"{option} {text}: ambiguous unit 'm': use M for months or min for minutes"
        )
    if unit in _CALENDAR_MONTHS:
        if not amount.isdigit() or int(amount) < 1:
            raise InputError(f"{option} {text}: a calendar period takes a whole number, e.g. 3M")
        months = int(amount) * _CALENDAR_MONTHS[unit]
        if months > _MAX_MONTHS:
            raise InputError(
                f"{option} {text}: longer than the whole range of int64 nanosecond dates "
                "(1677-09-22 .. 2262-04-10, about 584 years)"
            )
        return "calendar", months
    try:
        ns = int(timedelta_to_ns(f"{amount}{unit}", "width", option))
    except OverflowError:
        ns = None
    except (TypeError, ValueError):
        raise InputError(
            f"{option} {text}: unknown time unit {unit!r} (use Y or M for calendar years or "
            "months, or W, D, h, min, s, ms, us, ns)"
        ) from None
    if ns is None or ns > _MAX_NS:
        raise InputError(
            f"{option} {text}: longer than the longest int64 nanosecond duration (about 292 years)"
        )
    if ns < 1:
        raise InputError(
            f"{option} {text}: shorter than 1 ns, the resolution of a time axis "
            "(int64 nanoseconds); give a positive duration of at least 1ns"
        )
    return "fixed", ns


def _width_arg(text: str) -> str:
    """``--width``: a positive number, or (checked against the axis later) a duration."""
    try:
        v = float(text)
    except ValueError:
        if _PERIOD.match(text):
            return text.strip()
        raise argparse.ArgumentTypeError(
            f"expected a positive number, or a duration such as 7D on a time axis, got {text!r}"
        ) from None
    if not np.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return text.strip()


def parse_bins(text: str) -> int | np.ndarray:
    """``--bins``: a number of equal-width bins, or comma-separated increasing edges."""
    text = text.strip()
    if "," not in text:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(
                "--bins takes a number of bins (e.g. --bins 10) or at least two "
                f"comma-separated edges (e.g. --bins 0,1,2.5,10), got {text!r}"
            )
        return n
    try:
        edges = np.array([float(s) for s in text.split(",") if s.strip()], dtype=np.float64)
    except ValueError:
        raise InputError(f"--bins: the edges must be numbers, got {text!r}") from None
    if edges.size < 2:
        raise InputError(f"--bins needs at least two edges, got {text!r}")
    if not np.all(np.isfinite(edges)):
        raise InputError(f"--bins: the edges must be finite numbers, got {text!r}")
    if np.any(np.diff(edges) < 0):
        raise InputError(f"--bins: the edges must increase, got {text!r}")
    return edges


def check_bins(text: str) -> None:
    """``--bins`` syntax, checked before the data is read (the axis decides the rest later)."""
    stripped = text.strip()
    if "," in stripped:
        cells = [c.strip() for c in stripped.split(",") if c.strip()]
        if cells and all(is_iso_date(c) for c in cells):
            parse_dates(cells, f"--bins {stripped}", lambda i: f"edge {i}")
            return
    elif _PERIOD.match(stripped):
        parse_period(stripped, "--bins")
        return
    parse_bins(text)


def parse_stats(specs: Sequence[str] | None) -> tuple[str, ...]:
    """``--stat mean,std`` (repeatable) -> the statistic names, in order, without repeats."""
    names: list[str] = []
    known = STATS + COUNTS
    for spec in specs or [DEFAULT_STATS]:
        for s in spec.split(","):
            s = s.strip().lower()
            if not s:
                continue
            if s not in known:
                raise InputError(
                    f"--stat: unknown statistic {s!r} (choose from {', '.join(known)})"
                )
            if s not in names:
                names.append(s)
    if not names:
        raise InputError(f"--stat: give at least one statistic ({', '.join(STATS + COUNTS)})")
    return tuple(names)


def _fmt(v: Any) -> str:
    """A number for the aligned table on screen (files keep full precision)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.6g}"
    return str(v)


def _cells(values: Any, unit: str) -> list[str]:
    a = np.asarray(values)
    if a.dtype.kind == "M":  # a time axis: ISO dates, NaT where a subset is empty
        return ["NaT" if t is None else t for t in iso_strings(a, unit)]
    return [_fmt(v) for v in a.tolist()]


def format_table(columns: dict[str, Any]) -> str:
    """Columns as an aligned text table: a header row, then one row per entry.

    Dates (``datetime64`` columns) print as ISO-8601 text, all at one precision.
    """
    names = list(columns)
    unit = iso_unit(*(v for v in columns.values() if np.asarray(v).dtype.kind == "M"))
    cells = [_cells(columns[k], unit) for k in names]
    widths = [max([len(k)] + [len(c) for c in col]) for k, col in zip(names, cells, strict=True)]
    lines = ["  ".join(k.rjust(w) for k, w in zip(names, widths, strict=True))]
    n_rows = len(cells[0]) if cells else 0
    for i in range(n_rows):
        lines.append("  ".join(col[i].rjust(w) for col, w in zip(cells, widths, strict=True)))
    return "\n".join(lines)


class Progress:
    """A progress bar on ``stream`` (stderr), drawn only on a terminal and after ``delay`` s.

    Work goes through stages (``stage("reading data.csv")``, ``stage("computing", total=12)``);
    a stage with a total shows a bar, one without shows the elapsed time. After :meth:`start`
    a background thread redraws the line a few times a second, so a long stage with no steps
    (reading a big file, one large computation) still shows that it is alive. Quick runs and
    redirected output never see it; :meth:`close` erases it.
    """

    def __init__(
        self,
        total: int | None,
        label: str,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        delay: float = 0.5,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and bool(isatty and isatty())
        self.total = total
        self.label = label
        self.done = 0
        self.t0 = self.t_stage = time.perf_counter()
        self.delay = delay
        self.last = -1.0
        self.width = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def drawn(self) -> bool:
        return self.width > 0

    def start(self) -> "Progress":
        """Start redrawing in the background (only when enabled)."""
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(0.25):
            self._draw(force=True)

    def stage(self, label: str, total: int | None = None) -> None:
        """Begin a new stage of work."""
        with self._lock:
            self.label, self.total, self.done = label, total, 0
            self.t_stage = time.perf_counter()
        self._draw(force=True)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more steps of the current stage done."""
        with self._lock:
            self.done += n
        self._draw()

    def _line(self) -> str:
        elapsed = time.perf_counter() - self.t_stage
        if not self.total:
            return f"{self.label} ... {elapsed:.1f} s"
        done = min(self.done, self.total)
        filled = 30 * done // self.total
        bar = "#" * filled + "-" * (30 - filled)
        return f"{self.label} [{bar}] {100 * done // self.total:3d}% ({done}/{self.total})"

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = time.perf_counter()
            if now - self.t0 < self.delay:
                return
            finished = bool(self.total) and self.done >= self.total
            if not force and not finished and now - self.last < 0.1:
                return
            self.last = now
            line = self._line()
            pad = " " * max(self.width - len(line), 0)
            self.stream.write(f"\r{line}{pad}")
            self.stream.flush()
            self.width = max(self.width, len(line))

    def close(self) -> None:
        """Stop redrawing and erase the line."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0


def _require_matplotlib(what: str) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(
            f"{what} needs matplotlib, which is not installed: pip install 'jaxsubset[plot]'"
        ) from None


def _new_figure() -> tuple[Any, Any]:
    """A figure of FIGSIZE at DPI on the Agg canvas, without pyplot (no GUI, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def save_figure(fig: Any, path: str) -> None:
    """Save ``fig`` atomically to ``path`` (its extension picks the format)."""
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=DPI)


# ---------------------------------------------------------------------------- statistics
def _block_stats_impl(
    x, y, start, count, capacity: int, stats: tuple[str, ...], ddof: int, nan_policy: str
):
    import jaxsubset

    s = jaxsubset.gather(x, y, jaxsubset.Ranges(start, count), capacity=capacity)
    out = {}
    for st in stats:
        if st in ("std", "var"):
            out[st] = getattr(s, st)(ddof=ddof, nan_policy=nan_policy)
        else:
            out[st] = getattr(s, st)(nan_policy=nan_policy)
    return out


@functools.cache
def _block_stats_jit():
    import jax

    return jax.jit(_block_stats_impl, static_argnames=("capacity", "stats", "ddof", "nan_policy"))


def _blocks(count: np.ndarray, channels: int) -> tuple[int, int, int]:
    """Capacity, ranges per block and number of blocks for the padded gathers."""
    import jaxsubset

    k = count.shape[0]
    capacity = jaxsubset.required_capacity(count) if k else 1
    block = max(1, min(k, (1 << 22) // (capacity * channels)))
    return capacity, block, -(-k // block)


def _gather_stats(
    x: np.ndarray,
    y: np.ndarray,
    start: np.ndarray,
    count: np.ndarray,
    stats: tuple[str, ...],
    ddof: int,
    progress: Progress,
    nan_policy: str = "propagate",
) -> dict[str, np.ndarray]:
    """Per-range statistics by padded gathers, a bounded block of ranges at a time.

    Each block has the same static shape (the last is padded with empty ranges), so the
    whole table costs one compilation; the block size keeps memory near 2**22 values.
    """
    k = start.shape[0]
    capacity, block, n_blocks = _blocks(count, y.shape[1])
    fn = _block_stats_jit()
    parts: dict[str, list[np.ndarray]] = {st: [] for st in stats}
    for b in range(n_blocks):
        lo, hi = b * block, min((b + 1) * block, k)
        s = np.zeros(block, start.dtype)
        c = np.zeros(block, count.dtype)
        s[: hi - lo] = start[lo:hi]
        c[: hi - lo] = count[lo:hi]
        res = fn(x, y, s, c, capacity=capacity, stats=stats, ddof=ddof, nan_policy=nan_policy)
        for st in stats:
            parts[st].append(np.asarray(res[st])[: hi - lo])
        progress.advance()
    return {st: np.concatenate(parts[st], axis=0) for st in stats}


def _takes_nan_policy(fn: Any) -> bool:
    """Whether the library function ``fn`` has a ``nan_policy`` parameter (it grows one)."""
    try:
        return "nan_policy" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def valid_counts(y: np.ndarray, start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``(K, C)`` int64: the real (non-NaN) readings of every y column in every range."""
    ok = np.concatenate([np.zeros((1, y.shape[1]), np.int64), np.cumsum(~np.isnan(y), axis=0)])
    return ok[start + count] - ok[start]


def covered(n: int, start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``(n,)`` bool: the points that belong to at least one range."""
    keep = count > 0
    d = np.bincount(start[keep], minlength=n + 1) - np.bincount(
        (start + count)[keep], minlength=n + 1
    )
    return np.cumsum(d[:n]) > 0


def compute_statistics(
    xy: XY,
    ranges: Any,
    stats: tuple[str, ...],
    *,
    ddof: int = 0,
    progress: Progress | None = None,
    nan_policy: str = "propagate",
) -> dict[str, np.ndarray]:
    """Every requested statistic of every y column over every range.

    Args:
        xy: the data.
        ranges: :class:`jaxsubset.Ranges` on ``xy.x``.
        stats: statistic names from :data:`STATS` and :data:`COUNTS`.
        ddof: delta degrees of freedom of ``std``/``var``.
        progress: optional progress bar.
        nan_policy: ``"propagate"`` (a missing reading makes its subsets' statistics NaN) or
            ``"omit"`` (statistics of the real readings only, SciPy's name); ``"raise"`` is the
            caller's check (see :func:`run_stats`), here the same as ``"propagate"``.

    Returns:
        statistic name -> ``(K, C)`` float64 (``count``: ``(K, 1)`` int64, ``valid``:
        ``(K, C)`` int64).
    """
    import jaxsubset

    progress = progress or Progress(None, "", enabled=False)
    start = np.asarray(ranges.start).reshape(-1)
    count = np.asarray(ranges.count).reshape(-1)
    omit = nan_policy == "omit" and bool(np.isnan(xy.y).any())
    policy = "omit" if omit else "propagate"
    out: dict[str, np.ndarray] = {}
    # O(N + K) prefix sums / sparse tables where the library has them (never K x capacity);
    # the median, which sorts inside padded windows, by bounded blocks of padded gathers.
    # Omitting missing readings goes through the library's nan_policy: range_statistic's when
    # it has one, else the padded Subsets reductions'.
    range_statistic = getattr(jaxsubset, "range_statistic", None)
    if range_statistic is not None and omit and not _takes_nan_policy(range_statistic):
        range_statistic = None
    fast: tuple[str, ...] = ()
    if range_statistic is not None:
        fast = tuple(st for st in stats if st not in ("count", "median") + COUNTS)
    padded = tuple(st for st in stats if st not in ("count",) + COUNTS and st not in fast)
    n_blocks = _blocks(count, xy.y.shape[1])[2] if padded else 0
    progress.stage("computing", total=n_blocks + bool(fast))
    if fast:
        flat = jaxsubset.Ranges(start, count, ranges.max_count)
        kw = {"nan_policy": "omit"} if omit else {}
        res = range_statistic(xy.y, flat, fast, ddof=ddof, **kw)
        out.update({st: np.asarray(res[st], dtype=np.float64) for st in fast})
        progress.advance()
    if padded:
        out.update(_gather_stats(xy.x, xy.y, start, count, padded, ddof, progress, policy))
    if "count" in stats:
        out["count"] = count.astype(np.int64)[:, None]
    if "valid" in stats:
        out["valid"] = valid_counts(xy.y, start.astype(np.int64), count.astype(np.int64))
    return {st: out[st] for st in stats}


# ---------------------------------------------------------------------------- stats
def _range_dates(table: Any, j: int, role: str, x_format: str | None) -> np.ndarray:
    """Column ``j`` of a ranges file as int64 ns (ISO dates, or dates of ``x_format``)."""
    col = table.columns[j]
    fmt = x_format
    if fmt is not None and col.dtype.kind == "U":
        filled = col[np.char.strip(col) != ""]
        if filled.size and is_iso_date(str(filled[0])):
            fmt = None  # ISO dates in the ranges file, whatever the data's own format
    ns = to_time(table, j, role, fmt)
    if ns is None:
        raise InputError(
            f"{table.path}: {role} column {table.names[j]!r} holds numbers, but x is a time "
            "axis: give the ranges as dates, e.g. 2001-12-29,2002-01-05"
        )
    return ns


def read_range_file(
    path: str, x_time: bool = False, x_format: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``--ranges FILE``: rows ``lo,hi`` of x values (half-open ``[lo, hi)``), header optional.

    On a time axis (``x_time``) the rows are dates (ISO-8601, or of ``x_format``) and come back
    as int64 nanoseconds; otherwise numbers, as float64.
    """
    table = read_table(path, x_format)
    if len(table.names) < 2:
        raise InputError(f"{path}: a ranges file needs two columns, lo and hi, on every row")
    if x_time:
        lo = _range_dates(table, 0, "lo", x_format)
        hi = _range_dates(table, 1, "hi", x_format)
    else:
        for j, role in enumerate(("lo", "hi")):
            col = table.columns[j]
            if col.dtype.kind in "UO" and to_time(table, j, role) is not None:
                raise InputError(
                    f"{path}: the ranges are dates, but the x column holds numbers {_NUMBERS_HINT}"
                )
        lo = to_numeric(table, 0, "lo").astype(np.float64)
        hi = to_numeric(table, 1, "hi").astype(np.float64)
    if len(lo) != len(hi):
        raise InputError(f"{path}: length mismatch: {len(lo)} lo values, {len(hi)} hi values")
    if not x_time:
        bad = np.isnan(lo) | np.isnan(hi)
        if bad.any():
            raise InputError(f"{path}: range {int(np.argmax(bad))} has a missing lo or hi value")
    back = hi < lo
    if back.any():
        i = int(np.argmax(back))
        if x_time:
            h, low = iso_strings(np.array([hi[i], lo[i]]).view("datetime64[ns]"))
        else:
            h, low = format_value(hi[i]), format_value(lo[i])
        raise InputError(f"{path}: range {i} ({table.where(i)}) has hi < lo ({h} < {low})")
    return lo, hi


_NUMBERS_HINT = "(for dates stored as numbers such as 20011229 pass --x-format %Y%m%d)"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_width(text: str) -> None:
    """``--width`` checks that need no data: a known unit, not a calendar period."""
    if _is_number(text):
        return
    period = parse_period(text, "--width")
    if period is not None and period[0] == "calendar":
        raise InputError(
            f"--width {text}: months and years have no fixed length; for calendar periods "
            f"use bins, e.g. --bins {text}"
        )


def width_value(text: str, xy: XY) -> float | int:
    """``--width`` on this axis: a float on a numeric axis, int64 nanoseconds on a time axis."""
    check_width(text)
    period = None if _is_number(text) else parse_period(text, "--width")
    if xy.x_time:
        if period is None:
            raise InputError(
                f"--width {text}: x column {xy.x_name!r} holds dates, so the width needs a "
                "unit, e.g. --width 7D, 12h or 30min"
            )
        return period[1]
    if period is not None:
        raise InputError(
            f"--width {text}: a duration needs a time axis, but x column {xy.x_name!r} holds "
            f"numbers {_NUMBERS_HINT}"
        )
    return float(text)


def _equal_time_edges(x: np.ndarray, n: int) -> np.ndarray:
    """``n`` equal bins over ``[x[0], x[-1]]`` in exact integer nanoseconds."""
    lo, hi = int(x[0]), int(x[-1])
    if hi == lo:  # as numpy.histogram: a range of one unit (a second) around the point
        lo, hi = lo - 5 * 10**8, hi + 5 * 10**8
    span = hi - lo  # a Python int: no int64 overflow for spans of centuries
    if n > 2**31:  # r * i below could overflow int64: exact Python ints instead
        return np.array([lo + span * i // n for i in range(n + 1)], dtype=np.int64)
    q, r = divmod(span, n)  # lo + span * i // n, exactly, without a product beyond int64
    i = np.arange(n + 1, dtype=np.int64)
    return lo + q * i + (r * i) // n


def _too_many(k: int, text: str) -> None:
    if k > MAX_BINS:
        raise InputError(f"--bins {text} gives {k} bins over the data; choose a longer period")


def _fixed_edges(x: np.ndarray, width: int, text: str) -> np.ndarray:
    """Bins of ``width`` ns from the floor of the first point: multiples of the width from
    midnight of the first day (pandas ``resample``'s edges), the last edge past the data."""
    x0, x1 = int(x[0]), int(x[-1])
    origin = x0 // _DAY_NS * _DAY_NS
    first = origin + (x0 - origin) // width * width
    k = (x1 - first) // width + 1
    _too_many(k, text)
    return first + width * np.arange(k + 1, dtype=np.int64)


def _month_of(ns: Any) -> int:
    """Months since 1970-01 of the date ``ns`` (int nanoseconds)."""
    return int(np.datetime64(int(ns), "ns").astype("datetime64[M]").astype(np.int64))


def _calendar_edges(x: np.ndarray, months: int, text: str) -> np.ndarray:
    """Calendar bins of ``months`` months: edges on Jan 1 (years), the 1st of a quarter, or
    the 1st of the first point's month, the last edge past the data."""
    m0, m1 = _month_of(x[0]), _month_of(x[-1])
    if months % 12 == 0:
        m0 -= m0 % 12  # January
    elif months % 3 == 0:
        m0 -= m0 % 3  # the first month of a quarter
    k = (m1 - m0) // months + 1
    _too_many(k, text)
    edges = np.datetime64("1970-01", "M") + (m0 + months * np.arange(k + 1))
    if edges[-1] > np.datetime64("2262-04", "M"):
        raise InputError(f"--bins {text}: the last bin ends after 2262-04-11 (int64 nanoseconds)")
    return edges.astype("datetime64[ns]").view(np.int64)


def bin_edges(text: str, xy: XY, x_format: str | None = None) -> tuple[np.ndarray, str]:
    """``--bins`` on this axis: the edges (int64 ns on a time axis) and a description."""
    stripped = text.strip()
    x = xy.x
    if "," in stripped:
        cells = [c.strip() for c in stripped.split(",") if c.strip()]
        dates = bool(cells) and all(is_iso_date(c) for c in cells)
        if xy.x_time:
            fmt = None if dates else x_format
            if not dates and fmt is None:
                raise InputError(
                    f"--bins {stripped}: x column {xy.x_name!r} holds dates: give the edges as "
                    "dates (e.g. --bins 2001-01-01,2002-01-01) or a period (--bins 1M, 7D)"
                )
            edges = parse_dates(cells, f"--bins {stripped}", lambda i: f"edge {i}", fmt)
            if len(edges) < 2:
                raise InputError(f"--bins needs at least two edges, got {stripped!r}")
            if np.any(np.diff(edges) < 0):
                raise InputError(f"--bins: the edges must increase, got {stripped!r}")
            return edges, f"{len(edges) - 1} bins"
        if dates:
            raise InputError(
                f"--bins {stripped}: date edges need a time axis, but x column {xy.x_name!r} "
                f"holds numbers {_NUMBERS_HINT}"
            )
        edges = parse_bins(text)
        return edges, f"{len(edges) - 1} bins"
    period = parse_period(stripped, "--bins") if _PERIOD.match(stripped) else None
    if period is None:
        n = parse_bins(text)
        edges = _equal_time_edges(x, n) if xy.x_time else np.histogram_bin_edges(x, n)
        return edges, f"{n} bins"
    if not xy.x_time:
        raise InputError(
            f"--bins {stripped}: a time period needs a time axis, but x column {xy.x_name!r} "
            f"holds numbers {_NUMBERS_HINT}"
        )
    kind, v = period
    if kind == "calendar":
        return _calendar_edges(x, v, stripped), f"calendar bins of {stripped}"
    return _fixed_edges(x, v, stripped), f"bins of {stripped}"


def x_request(args: argparse.Namespace, xy: XY) -> tuple[Any, str, dict[str, np.ndarray]]:
    """``--width`` or ``--bins`` in x units: the width or the edges, a description, and the
    x bounds of every subset (``lo``/``hi``), on a time axis in int64 nanoseconds."""
    x = xy.x
    if args.width is not None:
        width = width_value(str(args.width), xy)
        if xy.x_time:
            what = f"time windows (a - {args.width}, a] at every point"
            return width, what, {"lo": x - np.int64(width), "hi": x}
        lo = x.astype(np.float64) - width
        return width, f"x-width windows (a - {width!r}, a] at every point", {"lo": lo, "hi": x}
    edges, what = bin_edges(args.bins, xy, getattr(args, "x_format", None))
    return edges, what, {"lo": edges[:-1], "hi": edges[1:]}


def build_ranges(args: argparse.Namespace, xy: XY) -> tuple[Any, str, dict[str, np.ndarray]]:
    """The :class:`jaxsubset.Ranges` the options ask for, a description, and x bounds (if any).

    The bounds (``lo``/``hi`` columns) are reported for the requests made in x units
    (``--width``, ``--bins``, ``--ranges``); chunks and windows are index ranges. On a time
    axis x, the bounds and the widths are int64 nanoseconds.
    """
    import jaxsubset

    x = xy.x
    n = x.shape[0]
    x_format = getattr(args, "x_format", None)
    if args.step is not None and args.window is None:
        raise InputError("--step goes with --window only (the step between sliding windows)")
    if args.chunks is not None:
        return jaxsubset.ranges.chunks(x, args.chunks), f"{args.chunks} chunks", {}
    if args.size is not None:
        return jaxsubset.ranges.chunks(x, size=args.size), f"chunks of {args.size} points", {}
    if args.window is not None:
        if args.window > n:
            raise InputError(f"--window {args.window} is longer than the data ({n} points)")
        step = args.step or 1
        r = jaxsubset.ranges.sliding(x, args.window, step=step)
        return r, f"sliding windows of {args.window} points, step {step}", {}
    if args.width is not None:
        width, what, bounds = x_request(args, xy)
        return jaxsubset.ranges.rolling(x, width), what, bounds
    if args.bins is not None:
        edges, what, bounds = x_request(args, xy)
        return jaxsubset.ranges.bins(x, edges), what, bounds
    lo, hi = read_range_file(args.ranges, xy.x_time, x_format)
    r = jaxsubset.ranges.select(x, lo, hi, closed="left")
    return r, f"{len(lo)} ranges [lo, hi) from {args.ranges}", {"lo": lo, "hi": hi}


def result_columns(
    xy: XY, ranges: Any, bounds: dict[str, np.ndarray], values: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The output table: subset, start, count, x_first, x_last, [lo, hi], then the statistics.

    With several y columns the statistics are named ``<stat>_<y column>``. On a time axis the
    x columns are ``datetime64[ns]`` (NaT where a subset is empty).
    """
    start = np.asarray(ranges.start).reshape(-1).astype(np.int64)
    count = np.asarray(ranges.count).reshape(-1).astype(np.int64)
    x = xy.x.view("datetime64[ns]") if xy.x_time else xy.x
    first = x[np.minimum(start, len(x) - 1)]
    last = x[np.clip(start + count - 1, 0, len(x) - 1)]
    if x.dtype.kind == "b":  # as the in-memory reader holds a bool x: int64 0/1
        first, last = first.astype(np.int64), last.astype(np.int64)
    if (count == 0).any():
        none = np.datetime64("NaT", "ns") if xy.x_time else np.nan
        first = np.where(count > 0, first, none)
        last = np.where(count > 0, last, none)
    if xy.x_time:  # the x bounds as dates (ISO text in the table and files)
        bounds = {k: np.asarray(v, np.int64).view("datetime64[ns]") for k, v in bounds.items()}
    cols: dict[str, np.ndarray] = {
        "subset": np.arange(len(start)),
        "start": start,
        "count": count,
        "x_first": first,
        "x_last": last,
    }
    cols.update(bounds)
    several = len(xy.y_names) > 1
    for st, v in values.items():
        if st == "count":
            continue  # the count column already is this
        for c, name in enumerate(xy.y_names):
            cols[f"{st}_{name}" if several else st] = v[:, c]
    return cols


def missing_readings(xy: XY, ranges: Any, nan_policy: str) -> int:
    """The number of missing (NaN) y readings inside the subsets; with ``nan_policy="raise"``
    any of them is an :class:`InputError` naming the first."""
    nan = np.isnan(xy.y)
    if not nan.any():
        return 0
    start = np.asarray(ranges.start).reshape(-1).astype(np.int64)
    count = np.asarray(ranges.count).reshape(-1).astype(np.int64)
    nan &= covered(len(xy.x), start, count)[:, None]
    n = int(nan.sum())
    if n and nan_policy == "raise":
        row, col = (int(v[0]) for v in np.nonzero(nan))
        raise InputError(
            f"--nan-policy raise: the subsets hold {n} missing y reading(s), the first in "
            f"column {xy.y_names[col]!r} at {xy.where(row)} (--nan-policy omit skips them)"
        )
    return n


def check_subset_count(args: argparse.Namespace, stats: tuple[str, ...]) -> None:
    """``--chunks N`` / ``--bins N`` ask for N subsets whatever the data: N rows must fit in
    the free memory (checked before the data is read)."""
    for option, text in (("--chunks", args.chunks), ("--bins", args.bins)):
        if text is None or not str(text).strip().isdigit():
            continue
        n = int(str(text).strip())
        check_memory(
            n * _BYTES_PER_SUBSET * (len(stats) + 1), f"{option} {n}: a table of {n} subsets"
        )


def run_stats(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    def info(msg: str) -> None:
        if not args.quiet:
            print(msg, file=stderr)

    inputs = [args.input] + ([args.ranges] if args.ranges else [])
    stats = parse_stats(args.stat)
    check_subset_count(args, stats)
    if args.bins is not None:
        check_bins(args.bins)  # fail on a bad spec before reading the data
    if args.width is not None:
        check_width(args.width)
    if args.out is not None:
        check_output_path(args.out, inputs, OUTPUT_SUFFIXES)
    if args.plot is not None:
        check_output_path(args.plot, inputs, PLOT_SUFFIXES)
        _require_matplotlib("--plot")
    if args.out is not None and args.plot is not None:
        if os.path.abspath(args.out) == os.path.abspath(args.plot):
            raise InputError("--out and --plot name the same file")
    progress = Progress(None, "", stream=stderr, enabled=not args.quiet).start()
    try:
        if wants_stream(args, stats):  # a big .npy: block by block, never loaded whole
            progress.stage(f"streaming {args.input}")
            xy, ranges, bounds, values, what, n_missing = streamed_statistics(
                args, stats, x_request
            )
        else:
            progress.stage(f"reading {args.input}")
            xy = read_xy(args.input, args.x, args.y, sort=args.sort, x_format=args.x_format)
            progress.stage("finding the subsets")
            ranges, what, bounds = build_ranges(args, xy)
            n_missing = missing_readings(xy, ranges, args.nan_policy)
            values = compute_statistics(
                xy, ranges, stats, ddof=args.ddof, progress=progress, nan_policy=args.nan_policy
            )
        cols = result_columns(xy, ranges, bounds, values)
        n_rows = len(cols["subset"])
        progress.stage("writing")
        if args.out is not None and args.plot is not None:
            # Both or neither: the figure is rendered to its temporary file first.
            fig = _stats_figure(xy, ranges, values, stats, what)
            with atomic_output(args.plot) as tmp:
                fig.savefig(tmp, format=os.path.splitext(args.plot)[1][1:].lower(), dpi=DPI)
                write_table(args.out, cols)
        elif args.plot is not None:
            save_figure(_stats_figure(xy, ranges, values, stats, what), args.plot)
        elif args.out is not None:
            write_table(args.out, cols)
    finally:
        progress.close()
    if xy.sorted_rows:
        info(f"sorted {len(xy.x)} rows by x column {xy.x_name!r} (--sort)")
    if n_missing and args.nan_policy == "omit":
        info(
            f"omitted {n_missing} missing y reading(s) (empty or NaN cells) from the statistics "
            "(--nan-policy omit; --nan-policy propagate gives NaN instead)"
        )
    if args.out is None:
        print(format_table(cols), file=stdout)
    else:
        info(f"wrote {n_rows} subsets ({what}) to {args.out}")
    if args.plot is not None:
        info(f"wrote the figure to {args.plot}")
    return 0


def _stats_figure(xy: XY, ranges: Any, values: dict[str, np.ndarray], stats, what: str) -> Any:
    from ._plot import plot_subsets

    stat = next((s for s in stats if s not in ("count", "valid")), stats[0])

    def label(name: str) -> str:  # headerless files name their columns "0", "1", ...
        return f"column {name}" if name.isdigit() else name

    v = values[stat][:, 0].astype(np.float64)
    fig, ax = _new_figure()
    plot_subsets(
        xy.x.view("datetime64[ns]") if xy.x_time else xy.x,
        xy.y[:, 0],
        ranges,
        ax=ax,
        values=v,
        value_label=stat,
        xlabel=label(xy.x_name),
        ylabel=label(xy.y_names[0]),
        title=f"{stat} of {label(xy.y_names[0])} over {what}",
    )
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------- the parser
_MAIN_EPILOG = """\
examples:
  jaxsubset demo --out demo-out
  jaxsubset stats data.csv --x time --y signal --chunks 10 --stat mean,std
  jaxsubset stats data.csv --width 2.5 --stat mean --out rolling.csv --plot rolling.png
"""

_STATS_EPILOG = """\
subsets (choose exactly one):
  --chunks 10            10 pieces of (almost) equal size, as numpy.array_split
  --size 500             pieces of 500 points, the last one shorter
  --window 50 --step 10  sliding windows of 50 points, one every 10 points
  --width 2.5            at every point a, the points with a - 2.5 < x <= a (pandas rolling)
  --bins 20              20 equal-width bins over [min x, max x], as numpy.histogram
  --bins 0,1,2.5,10      bins with these edges: [0,1) [1,2.5) [2.5,10]
  --ranges cuts.csv      one subset per row lo,hi of the file: the points with lo <= x < hi

time axes (an x column of dates):
  ISO-8601 dates or datetimes (2001-12-29, 2001-12-29T06:00, 2001-12-29 06:00:00, with Z or
  +01:00 converted to UTC) are recognised; other forms with --x-format (strptime), e.g.
  --x-format %Y%m%d for 20011229. Then:
  --width 7D             durations: W (7 days), D, h, min, s, ms, us, ns (a number alone is
                         an error: say the unit)
  --bins 1Y  --bins 3M   calendar bins: edges on Jan 1 / the 1st of the month (Q: quarters)
  --bins 7D  --bins 1h   fixed widths from midnight of the first day (pandas resample)
  --bins 12              12 equal bins; --bins 2001-01-01,2002-01-01,2003-01-01 date edges
  --ranges cuts.csv      rows of dates lo,hi
  x_first, x_last, lo and hi are printed and written as ISO dates (timestamps in Parquet).

missing values:
  an empty cell (or NA, NaN, null) in a y column is a missing reading. --nan-policy omit
  (the default) computes every statistic from the real readings only and says on stderr how
  many were omitted; propagate gives NaN statistics to a subset holding one; raise stops
  (exit status 2). --stat valid counts the real readings of every subset beside count.
  Duplicate x values are legal and keep their order. In --plot figures the data line breaks at
  missing readings and across gaps in x wider than 5 times the median spacing.

input files:
  .csv .tsv .txt .dat    columns by header name or 0-based index; a header is detected;
                         blank lines and lines starting with '#' are skipped
  .npy                   a 2-column array (x, y), a pair of rows (2, N), or a 1-D y
  .npz                   arrays by key
  .parquet               columns by name (needs pyarrow: pip install 'jaxsubset[parquet]')
  By default x and y are the columns named x and y, else the first and the second column;
  a file with a single column is y against its row index.

output:
  an aligned table on stdout, or --out FILE (.csv, .tsv, .json or .parquet) with the columns
  subset, start, count, x_first, x_last, [lo, hi], then one per statistic; numbers keep full
  precision. Outputs appear complete or not at all (also on Ctrl-C, SIGTERM, SIGHUP), and
  the input is never overwritten. Errors are one line on stderr with exit status 2; an
  unexpected error (a bug to report) exits with status 1, and --debug shows its traceback.

examples:
  jaxsubset stats data.csv --chunks 10
  jaxsubset stats data.tsv --x 0 --y 2 --window 100 --step 50 --stat mean,max --out w.json
  jaxsubset stats log.csv --x t --y a --y b --bins 0,10,20,30 --stat sum --quiet
  jaxsubset stats unsorted.csv --sort --width 1.0 --plot rolling.png
  jaxsubset stats weather.csv --x date --y temp --bins 1Y --stat mean,valid
  jaxsubset stats daily.csv --x-format %Y%m%d --width 7D --nan-policy propagate --out w.csv
"""


_DEBUG_HELP = "on an unexpected error (a bug to report), also print the Python traceback"


_NO_CACHE_HELP = (
    "do not use the compilation cache (default: compiled programs are kept in "
    "$XDG_CACHE_HOME/jaxsubset/jax or ~/.cache/jaxsubset/jax, so a later run skips "
    "compiling; JAXSUBSET_NO_CACHE=1 does the same)"
)


def build_parser() -> argparse.ArgumentParser:
    """The ``jaxsubset`` argument parser (``demo`` and ``stats`` subcommands)."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = _Parser(
        prog="jaxsubset",
        description="Statistics over subsets (chunks, windows, x-ranges, bins) of 1-D (x, y) "
        "data, computed with JAX.",
        epilog=_MAIN_EPILOG,
        formatter_class=fmt,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"jaxsubset {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,stats}")

    demo = sub.add_parser(
        "demo",
        help="run the motivating example on embedded data and write figures",
        description="The motivating example: x = linspace(0, 10, N), y = sin(2 pi x), cut into K "
        "subsets; one jitted function isolates each subset from its index bounds and computes "
        "count, mean, std, min and max. Prints the table, the number of compilations and the "
        "time per subset, and writes one PNG per subset plus overview.png (800 x 450 px).",
        epilog="example:\n  jaxsubset demo --out demo-out --n-points 1000 --n-subsets 5\n",
        formatter_class=fmt,
    )
    demo.add_argument(
        "--out",
        default="demo-out",
        metavar="DIR",
        help="folder for the figures, created if needed (default: demo-out), e.g. --out figs",
    )
    demo.add_argument(
        "--n-points",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="number of points (default: 1000), e.g. --n-points 100000",
    )
    demo.add_argument(
        "--n-subsets",
        type=_positive_int,
        default=5,
        metavar="K",
        help="number of subsets, 1 to 100 (default: 5), e.g. --n-subsets 8",
    )
    demo.add_argument("--quiet", action="store_true", help="print nothing, only write figures")
    demo.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    demo.add_argument("--no-cache", action="store_true", help=_NO_CACHE_HELP)

    st = sub.add_parser(
        "stats",
        help="per-subset statistics of the (x, y) columns of a file",
        description="Per-subset statistics of a file's (x, y) columns. x must be sorted "
        "ascending (or pass --sort).",
        epilog=_STATS_EPILOG,
        formatter_class=fmt,
    )
    st.add_argument("input", metavar="INPUT", help="the data file, e.g. data.csv")
    st.add_argument(
        "--x",
        metavar="COL",
        default=None,
        help="x column: name or 0-based index (default: the column named x, else the first "
        "column), e.g. --x time",
    )
    st.add_argument(
        "--y",
        metavar="COL",
        action="append",
        default=None,
        help="y column: name or 0-based index, repeat for several (default: the column named "
        "y, else the first other column), e.g. --y 1 --y pressure",
    )
    mode = st.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--chunks",
        type=_positive_int,
        metavar="N",
        help="N pieces as numpy.array_split, e.g. --chunks 10",
    )
    mode.add_argument(
        "--size",
        type=_positive_int,
        metavar="S",
        help="pieces of S points, the last shorter, e.g. --size 500",
    )
    mode.add_argument(
        "--window",
        type=_positive_int,
        metavar="S",
        help="sliding windows of S points (see --step), e.g. --window 50",
    )
    mode.add_argument(
        "--width",
        type=_width_arg,
        metavar="W",
        help="at every point a, the window a - W < x <= a; a duration on a time axis, "
        "e.g. --width 2.5 or --width 7D",
    )
    mode.add_argument(
        "--bins",
        metavar="N|EDGES|PERIOD",
        help="N equal-width bins, or comma-separated edges, or on a time axis a period "
        "(1Y, 3M: calendar; 7D, 1h: fixed), e.g. --bins 20 or --bins 0,1,2.5,10 or --bins 1M",
    )
    mode.add_argument(
        "--ranges",
        metavar="FILE",
        help="a file of rows lo,hi: one subset lo <= x < hi per row, e.g. --ranges cuts.csv",
    )
    st.add_argument(
        "--step",
        type=_positive_int,
        metavar="T",
        default=None,
        help="with --window: points between window starts (default 1), e.g. --step 10",
    )
    st.add_argument(
        "--stat",
        action="append",
        metavar="LIST",
        default=None,
        help=f"comma-separated statistics from {', '.join(STATS + COUNTS)} (default: "
        f"{DEFAULT_STATS}; valid: the real readings per subset), e.g. --stat mean,median",
    )
    st.add_argument(
        "--ddof",
        type=_nonneg_int,
        default=0,
        metavar="D",
        help="delta degrees of freedom of std and var (default 0), e.g. --ddof 1",
    )
    st.add_argument(
        "--out",
        metavar="FILE",
        default=None,
        help="write the table to FILE (.csv, .tsv, .json, .parquet) instead of "
        "stdout, e.g. --out stats.csv",
    )
    st.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help="figure of the data, the subsets shaded and the first statistic "
        "(.png, .pdf, .svg; needs matplotlib), e.g. --plot stats.png",
    )
    st.add_argument(
        "--x-format",
        metavar="FMT",
        default=None,
        help="strptime format of the dates in the x column (and in --ranges/--bins edges), "
        "when they are not ISO-8601, e.g. --x-format %%Y%%m%%d",
    )
    st.add_argument(
        "--nan-policy",
        choices=NAN_POLICIES,
        default="omit",
        help="missing y readings: omit them (default; the count is said on stderr), propagate "
        "NaN to the statistics, or raise an error, e.g. --nan-policy propagate",
    )
    st.add_argument(
        "--sort", action="store_true", help="sort the rows by x instead of rejecting an unsorted x"
    )
    st.add_argument(
        "--stream-above",
        type=_nonneg_float,
        metavar="MB",
        default=1000.0,
        help=".npy inputs larger than this many megabytes (default 1000) are streamed block by "
        "block through one compiled kernel instead of being read whole (not with --plot, "
        "--sort, --ranges or several --y), e.g. --stream-above 0 to always stream",
    )
    st.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no messages on stderr (errors still shown)",
    )
    st.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    st.add_argument("--no-cache", action="store_true", help=_NO_CACHE_HELP)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``jaxsubset`` command; returns the exit status: 0 ok, 2 bad input (one line on
    stderr naming the file or option), 1 an unexpected error (one line asking for a report; the
    traceback with ``--debug``), 130 on Ctrl-C, 128 + the signal number on SIGTERM/SIGHUP.

    Args:
        argv: the arguments after the program name; default ``sys.argv[1:]``.

    Returns:
        The exit status.

    Example:
        >>> from jaxsubset._cli import main
        >>> main(["stats", "no-such-file.csv", "--chunks", "2"])
        2
    """
    stdout, stderr = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    if args.command is None:
        parser.print_help(stderr)
        return 2
    debug = bool(getattr(args, "debug", False))
    import jax

    x64 = bool(jax.config.jax_enable_x64)
    restore_cache = command_cache(bool(getattr(args, "no_cache", False)))
    try:
        with _signals_clean_up():
            jax.config.update("jax_enable_x64", True)  # the data's float64 precision, kept
            if args.command == "demo":
                from ._demo import run_demo

                return run_demo(
                    args.out, args.n_points, args.n_subsets, stdout=stdout, quiet=args.quiet
                )
            return run_stats(args, stdout, stderr)
    except InputError as e:  # the documented input errors: exit status 2
        _trace(debug, stderr)
        msg = " ".join(str(e).split()) or type(e).__name__
        print(f"jaxsubset {args.command}: error: {msg}", file=stderr)
        return 2
    except Terminated as e:
        print(f"jaxsubset: terminated by {signal.Signals(e.signum).name}", file=stderr)
        return 128 + e.signum
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): stop quietly, as `cat` does.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stdout.fileno())
        return 0
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        print(f"jaxsubset {args.command}: error: {where}{e.strerror or e}", file=stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxsubset: interrupted", file=stderr)
        return 130
    except Exception as e:  # not a documented input error: a bug (or out of memory)
        _trace(debug, stderr)
        first = (str(e).strip().splitlines() or [""])[0][:300]
        what = f"{type(e).__name__}: {first}" if first else type(e).__name__
        if isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in str(e):
            print(f"jaxsubset {args.command}: error: out of memory ({what})", file=stderr)
            return 1
        hint = "" if debug else "; --debug shows the traceback"
        print(
            f"jaxsubset {args.command}: internal error: {what} -- this is a bug, please report "
            f"it with the command line{hint}",
            file=stderr,
        )
        return 1
    finally:
        jax.config.update("jax_enable_x64", x64)  # an in-process caller keeps its JAX mode
        restore_cache()  # ... and its compilation cache settings


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread so every ``atomic_output`` removes
    its temporary file on the way out, as for Ctrl-C (``KeyboardInterrupt``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_clean_up():
    """SIGTERM and SIGHUP raise :class:`Terminated` while the command runs (main thread only;
    elsewhere the handlers cannot be set and the defaults stay)."""
    old = {}

    def handler(signum: int, frame: Any) -> None:
        raise Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                with contextlib.suppress(ValueError, OSError):
                    old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, previous)


def _trace(debug: bool, stderr: TextIO) -> None:
    """With ``--debug``, the traceback of the exception being handled."""
    if debug:
        traceback.print_exc(file=stderr)
