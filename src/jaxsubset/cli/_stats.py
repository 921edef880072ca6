"""``jaxsubset stats``: the statistics of every subset of a file's ``(x, y)`` columns."""

import argparse
import os
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

import jaxsubset

from ._bigfile import streamed_statistics, wants_stream
from ._cache import JaxSession
from ._figures import DPI, PLOT_SUFFIXES, require_matplotlib, save_figure, stats_figure
from ._files import OUTPUT_SUFFIXES, InputError, check_memory
from ._options import (
    COUNTS,
    build_ranges,
    check_bins,
    check_bins_axis,
    check_width,
    parse_stats,
    quantile_q,
    width_value,
)
from ._progress import Progress
from ._reader import XY, read_xy
from ._windows import (
    check_windows,
    check_windows_axis,
    is_calendar,
    rolling_request,
    wants_windows,
    window_ranges,
)
from ._writer import atomic_output, check_output_path, format_table, write_table


# Memory per subset the table needs (bounds, the row's columns and the statistics' temporary
# arrays); the subsets a --chunks/--bins count asks for must fit in the free memory.
BYTES_PER_SUBSET = 256


def valid_counts(y: np.ndarray, start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``(K, C)`` int64: the real (non-NaN) readings of every y column in every range."""
    ok = np.concatenate([np.zeros((1, y.shape[1]), np.int64), np.cumsum(~np.isnan(y), axis=0)])
    return ok[start + count] - ok[start]


def count_bound(count: np.ndarray) -> int | None:
    """A bound on the ranges' lengths (None when every range is empty), for
    :class:`jaxsubset.Ranges`' ``max_count``: the longest count rounded up to 3 significant
    bits (4, 5, 6 or 7 times a power of two: at most 25% above it, and four compiled programs
    per doubling of the length, not one per file).

    With it the library's chooser takes its padded road for few long ranges (monthly bins of
    a 1e6-row file: 0.2-0.3 s a call against 0.7-4 s on the block tree it takes for ranges of
    unknown length; the same conventions, tests/test_cli_host_ranges.py).
    """
    longest = int(np.max(count)) if np.size(count) else 0
    if longest < 1:
        return None
    step = 1 << max(longest.bit_length() - 3, 0)
    return -(-longest // step) * step


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
    rolling: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:
    """Every requested statistic of every y column over every range.

    Args:
        xy: the data.
        ranges: :class:`jaxsubset.Ranges` on ``xy.x``.
        stats: statistic names from :data:`STATS` and :data:`COUNTS`, and quantiles ``q0.9``.
        ddof: delta degrees of freedom of ``std``/``var``.
        progress: optional progress bar.
        nan_policy: ``"propagate"`` (a missing reading makes its subsets' statistics NaN) or
            ``"omit"`` (statistics of the real readings only, SciPy's name); ``"raise"`` is the
            caller's check (see :func:`run_stats`), here the same as ``"propagate"``.
        rolling: when ``ranges`` are the x-width windows at every point, the arguments of
            :func:`jaxsubset.rolling_statistic` giving the same windows (``width`` and
            ``center``, or ``before`` and ``after``): the statistics then take the library's
            rolling road, which resolves the windows itself (4-5x faster than
            :func:`jaxsubset.range_statistic` over 1e6 materialised windows; the same numbers,
            tests/test_cli_reader.py), or ``window`` (and ``center``) when they hold a fixed
            number of points (:func:`fixed_window`).

    Returns:
        statistic name -> ``(K, C)`` float64 (``count``, the points of every subset, and
        ``valid``, the real readings of every y column: ``(K, C)`` int64).
    """
    progress = progress or Progress(None, "", enabled=False)
    start = np.asarray(ranges.start).reshape(-1)
    count = np.asarray(ranges.count).reshape(-1)
    omit = nan_policy == "omit" and bool(np.isnan(xy.y).any())
    policy = "omit" if omit else "propagate"
    out: dict[str, np.ndarray] = {}
    # Every statistic goes through range_statistic: O(N + K) memory on the block tree, and
    # the median and quantiles on the wavelet road (O(N log capacity), never K x capacity),
    # omitting missing readings through the library's own nan_policy. The quantiles take
    # one call each (``q`` is static); the rest one call together.
    quantiles = tuple(st for st in stats if quantile_q(st) is not None)
    together = tuple(st for st in stats if st not in ("count", *quantiles, *COUNTS))
    progress.stage("computing", total=len(quantiles) + bool(together))
    # host arrays on purpose: range_statistic's eager road reads them with np.asarray, and
    # Ranges declares the jax Arrays the library's own constructors return; the bound on the
    # ranges' lengths lets the library's chooser take its padded road where it fits
    bound = ranges.max_count if ranges.max_count is not None else count_bound(count)
    flat = jaxsubset.Ranges(start, count, bound)  # type: ignore[arg-type]

    def statistic(name: str | tuple[str, ...], **kw: Any) -> Any:
        if rolling is None:
            return jaxsubset.range_statistic(xy.y, flat, name, nan_policy=policy, **kw)
        x = None if "window" in rolling else xy.x  # fixed-count windows: no x to resolve
        # min_periods=0: a window of missing readings only gives what range_statistic gives
        # (a sum of 0, NaN elsewhere) instead of NaN everywhere
        return jaxsubset.rolling_statistic(
            x, xy.y, statistic=name, nan_policy=policy, min_periods=0, **rolling, **kw
        )

    if together:
        res = statistic(together, ddof=ddof)
        out.update({st: np.asarray(res[st], dtype=np.float64) for st in together})
        progress.advance()
    for st in quantiles:
        out[st] = np.asarray(statistic("quantile", q=quantile_q(st)), dtype=np.float64)
        progress.advance()
    if "count" in stats:  # the same for every y column, named per column like the others
        out["count"] = np.repeat(count.astype(np.int64)[:, None], xy.y.shape[1], axis=1)
    if "valid" in stats:
        out["valid"] = valid_counts(xy.y, start.astype(np.int64), count.astype(np.int64))
    return {st: out[st] for st in stats}


def result_columns(
    xy: XY, ranges: Any, bounds: dict[str, np.ndarray], values: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The output table: subset, start, count, x_first, x_last, [lo, hi], then the statistics.

    With several y columns every statistic is named ``<stat>_<y column>``, ``count_<y column>``
    and ``valid_<y column>`` too (the ``count`` column, the points of the subset, is always
    there). On a time axis the x columns are ``datetime64[ns]`` (NaT where a subset is empty).
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
        if st == "count" and not several:
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
            n * BYTES_PER_SUBSET * (len(stats) + 1), f"{option} {n}: a table of {n} subsets"
        )


def streams(args: argparse.Namespace, stats: tuple[str, ...]) -> bool:
    """Whether the input is streamed: a big ``.npy`` and no option that needs every point in
    memory (a figure, a sort, ranges from a file, several y columns, ``--x-format`` dates)."""
    whole = (
        args.plot is not None
        or args.sort
        or args.ranges is not None
        or bool(args.x_format)
        or len(args.y or []) > 1
        or is_calendar(args)  # month lengths: the in-memory resolver's calendar
    )
    return not whole and wants_stream(args.input, stats, stream_above_mb=args.stream_above)


def axis_check(args: argparse.Namespace, session: JaxSession | None = None) -> Callable[[XY], None]:
    """The checks of the options against the x axis (a duration needs a time axis, a number
    needs a numeric one, units, date edges), for the reader to run on the file's columns
    before it reads the data: a bad option on a big file fails at once. Once they pass, jax
    is imported (``session.start()``): nothing before needs it."""

    def check(xy: XY) -> None:
        if args.width is not None:
            width_value(args.width, xy)
        if args.bins is not None:
            check_bins_axis(args.bins, xy, args.x_format)
        check_windows_axis(args, xy)
        if session is not None:
            session.start()

    return check


def rolling_windows(args: argparse.Namespace, xy: XY, ranges: Any = None) -> dict[str, Any] | None:
    """The :func:`jaxsubset.rolling_statistic` arguments of ``--width`` (``--center``) or
    ``--before``/``--after`` on this axis: the windows :func:`build_ranges` and
    :func:`window_ranges` made with :func:`jaxsubset.ranges.rolling`; None for other subsets.

    When ``ranges`` (those windows) hold the same number of points ``w`` each, cut only at the
    ends of the data (an evenly sampled axis, a width a multiple of its step), the arguments
    are ``window=w`` (:func:`fixed_window`): the same windows, which the library would find
    fixed-count itself after resolving them; asked so, it resolves nothing (one compiled
    program fewer to trace and run)."""
    fixed = fixed_window(ranges) if ranges is not None else None
    if args.width is not None:
        center = bool(getattr(args, "center", False))
        if fixed is not None and fixed.get("center", False) == center:
            return fixed
        return {"width": width_value(args.width, xy), "center": center}
    if getattr(args, "before", None) is not None:
        before, after, _, _ = rolling_request(args, xy)
        return {"before": before, "after": after}
    return None


def fixed_window(ranges: Any) -> dict[str, Any] | None:
    """``{"window": w}`` when the windows (one per row) are the trailing windows of ``w``
    points (row ``i``: ``[i + 1 - w, i]`` cut at 0), ``{"window": w, "center": True}`` when
    they are pandas' centred ones (ending ``(w - 1) // 2`` rows later, cut at both ends);
    None otherwise. Read from the windows' ``start`` and ``count`` on the host, so they are
    exactly the same whatever the rounding of x."""
    start = np.asarray(ranges.start).reshape(-1).astype(np.int64)
    count = np.asarray(ranges.count).reshape(-1).astype(np.int64)
    n = count.shape[0]
    if n == 0:
        return None
    w = int(count.max())
    if w < 1:
        return None
    rows = np.arange(n, dtype=np.int64)
    for lead, kw in ((0, {"window": w}), ((w - 1) // 2, {"window": w, "center": True})):
        stop = np.minimum(rows + lead + 1, n)
        if np.array_equal(start, np.maximum(rows + lead + 1 - w, 0)) and np.array_equal(
            start + count, stop
        ):
            return kw
    return None


def run_stats(
    args: argparse.Namespace, stdout: TextIO, stderr: TextIO, session: JaxSession | None = None
) -> int:
    """Run ``jaxsubset stats`` with the parsed options; returns the exit status (0).

    Every problem with the files or options is an :class:`InputError` for :func:`main` to
    print; outputs are written only once everything is computed. ``session`` imports and sets
    up jax once the options and the input's header are checked (:func:`main`'s; without
    one is made and closed here).
    """
    if session is None:
        with JaxSession() as own:
            return run_stats(args, stdout, stderr, own)

    def info(msg: str) -> None:
        if not args.quiet:
            print(msg, file=stderr)

    inputs = [args.input] + ([args.ranges] if args.ranges else [])
    stats = parse_stats(args.stat)
    check_subset_count(args, stats)
    if args.step is not None and args.window is None:  # on every road, before any reading
        raise InputError("--step goes with --window only (the step between sliding windows)")
    if getattr(args, "center", False) and args.width is None:
        raise InputError("--center goes with --width only (it centres the x-width windows)")
    check_windows(args)
    if args.bins is not None:
        check_bins(args.bins)  # fail on a bad spec before reading the data
    if args.width is not None:
        check_width(args.width)
    if args.out is not None:
        check_output_path(args.out, inputs, OUTPUT_SUFFIXES)
    if args.plot is not None:
        check_output_path(args.plot, inputs, PLOT_SUFFIXES)
        require_matplotlib("--plot")
    if args.out is not None and args.plot is not None:
        if os.path.abspath(args.out) == os.path.abspath(args.plot):
            raise InputError("--out and --plot name the same file")
    progress = Progress(None, "", stream=stderr, enabled=not args.quiet).start()
    try:
        if streams(args, stats):  # a big .npy: block by block, never loaded whole
            progress.stage(f"streaming {args.input}")
            xy, ranges, bounds, values, what, n_missing = streamed_statistics(
                args.input,
                stats,
                x=args.x,
                y=args.y[0] if args.y else None,
                chunks=args.chunks,
                size=args.size,
                window=args.window,
                step=args.step,
                width=args.width,
                center=bool(getattr(args, "center", False)),
                bins=args.bins,
                windows=args if wants_windows(args) else None,
                ddof=args.ddof,
                nan_policy=args.nan_policy,
                check=axis_check(args, session),
            )
        else:
            progress.stage(f"reading {args.input}")
            xy = read_xy(
                args.input,
                args.x,
                args.y,
                sort=args.sort,
                x_format=args.x_format,
                check=axis_check(args, session),
            )
            session.start()  # (the check started it, unless the reader had no header to check)
            progress.stage("finding the subsets")
            if wants_windows(args):
                ranges, what, bounds = window_ranges(args, xy)
            else:
                ranges, what, bounds = build_ranges(args, xy)
            n_missing = missing_readings(xy, ranges, args.nan_policy)
            values = compute_statistics(
                xy,
                ranges,
                stats,
                ddof=args.ddof,
                progress=progress,
                nan_policy=args.nan_policy,
                rolling=rolling_windows(args, xy, ranges),
            )
        cols = result_columns(xy, ranges, bounds, values)
        n_rows = len(cols["subset"])
        progress.stage("writing")
        if args.out is not None and args.plot is not None:
            # Both or neither: the figure is rendered to its temporary file first.
            fig = stats_figure(xy, ranges, values, stats, what)
            with atomic_output(args.plot) as tmp:
                fig.savefig(tmp, format=os.path.splitext(args.plot)[1][1:].lower(), dpi=DPI)
                write_table(args.out, cols)
        elif args.plot is not None:
            save_figure(stats_figure(xy, ranges, values, stats, what), args.plot)
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
