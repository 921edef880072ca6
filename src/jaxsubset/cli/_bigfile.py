"""``jaxsubset stats`` on big ``.npy`` files: streamed block by block through one kernel.

A memory-mapped ``.npy`` larger than ``--stream-above`` megabytes is never loaded whole: the
statistics go through :func:`jaxsubset.stream` (fixed blocks with halos, one compiled kernel,
read-ahead in a thread), and the table is built from the same columns as the in-memory path.
"""

import os
import types
from collections.abc import Callable
from typing import Any

import numpy as np

import jaxsubset

from ._dates import checked_ns
from ._files import InputError
from ._options import COUNTS, STATS, x_request
from ._reader import XY, read_table, sniff
from ._windows import dynamic_request, rolling_request


# What the streamed path covers: jaxsubset.stream computes every statistic of the command but
# the quantiles (``q0.9``: they need their q).
STREAMED_STATS = (*STATS, *COUNTS)


def wants_stream(path: str, stats: tuple[str, ...], *, stream_above_mb: float) -> bool:
    """Whether ``path`` is streamed instead of read whole: a ``.npy`` file (by its content)
    of more than ``stream_above_mb`` megabytes. A statistic the streamed path does not compute
    (a quantile) is then an :class:`InputError` saying how to read the file whole instead.

    The caller first rules out the options that need every point in memory (a figure, a sort,
    ranges from a file, several y columns).
    """
    if not str(path).lower().endswith(".npy"):
        return False
    try:
        if sniff(path) != "npy":  # by content: an archive named .npy is read whole
            return False
    except InputError:
        return False  # the normal reader reports the problem
    try:
        size = os.path.getsize(path)
    except OSError:
        return False  # the normal reader reports the problem
    if size <= stream_above_mb * 1e6:
        return False
    other = [s for s in stats if s not in STREAMED_STATS]
    if other:
        raise InputError(
            f"--stat {other[0]}: {path} ({size / 1e6:.0f} MB, over --stream-above "
            f"{stream_above_mb:g}) is streamed block by block, which computes "
            f"{', '.join(STREAMED_STATS)} but no quantile; pass --stream-above "
            f"{int(size / 1e6) + 1} to read the file whole in memory"
        )
    return True


def time_x(col: np.ndarray, label: str, block: int) -> np.ndarray:
    """A datetime64 x column as int64 nanoseconds: a view of a ``datetime64[ns]`` column
    (checked for NaT block by block), else converted and range-checked into memory."""

    def where(a: int) -> Callable[[int], str]:
        return lambda i: f"row {a + i}"

    if col.dtype == np.dtype("datetime64[ns]"):
        ns = col.view(np.int64)
        for a in range(0, ns.shape[0], block):
            checked_ns(col[a : a + block], label, where(a))
        return ns
    out = np.empty(col.shape[0], np.int64)
    for a in range(0, col.shape[0], block):
        out[a : a + block] = checked_ns(col[a : a + block], label, where(a))
    return out


def columns(path: str, x_col: str | None, y_col: str | None, block: int) -> tuple[XY, np.ndarray]:
    """x and the y column, in an :class:`XY`, as the in-memory reader would choose them.

    They are memory-mapped views (nothing loaded), except an x that the in-memory reader
    would convert (bool, narrow or unsigned ints, float32/float16, datetime64 other than
    ``[ns]``): that x is held converted in memory (8 bytes a point), and the row index of a
    1-D file (x = 0, 1, ...) too. y stays mapped (converted to float64 block by block).
    """
    table = read_table(path, mmap=True)
    if x_col is None and y_col is None and len(table.names) == 1:  # a 1-D y: x is the row index
        y = table.column(0)
        if y.dtype.kind not in "biuf":
            raise InputError(f"{path}: the y column must be numeric, got {y.dtype}")
        x = np.arange(y.shape[0], dtype=np.int64)
        return XY(x, y[:, None], "index", [table.names[0]]), y
    ix = table.index_of(x_col if x_col is not None else 0, "x")
    if y_col is not None:
        iy = table.index_of(y_col, "y")
    else:
        rest = [i for i in range(len(table.names)) if i != ix]
        if not rest:
            raise InputError(f"{path}: needs a y column besides the x column")
        iy = rest[0]
    x, y = table.column(ix), table.column(iy)
    x_time = x.dtype.kind == "M"
    if y.dtype.kind not in "biuf":
        kind = "dates or times" if y.dtype.kind in "mM" else f"dtype {y.dtype}"
        raise InputError(f"{path}: y column {table.names[iy]!r} must be numeric, got {kind}")
    if x_time:
        x = time_x(x, f"{path}: x column {table.names[ix]!r}", block)
    elif x.dtype.kind not in "biuf":
        raise InputError(
            f"{path}: x column {table.names[ix]!r} must be numbers or dates, got {x.dtype}"
        )
    elif x.dtype.kind == "f" and x.dtype != np.float64:
        x = np.asarray(x, np.float64)
    elif x.dtype.kind in "biu" and x.dtype != np.int64:
        big = x.dtype.kind == "u" and x.dtype.itemsize == 8 and x.size and x.max() >= 2**63
        x = np.asarray(x, np.float64 if big else np.int64)
    xy = XY(x, y[:, None], table.names[ix], [table.names[iy]], x_time=x_time)
    return xy, y


def _source(x: np.ndarray, y: np.ndarray, block: int) -> Any:
    """What :func:`jaxsubset.stream` reads: the arrays themselves when y is float64, else
    blocks with y converted to float64 (sums of float32/float16 data accumulate in float64,
    as the in-memory path's do)."""
    if y.dtype == np.float64:
        return (x, y)
    n = x.shape[0]

    def blocks():
        for a in range(0, n, block):
            yield np.asarray(x[a : a + block]), np.asarray(y[a : a + block], np.float64)

    return blocks


def missing(y: np.ndarray, nan_policy: str, where: str, block: int) -> int:
    """Count missing readings in ``y`` block by block; with "raise" name the first."""
    if y.dtype.kind != "f":
        return 0
    total = 0
    for a in range(0, y.shape[0], block):
        nan = np.isnan(y[a : a + block])
        n = int(nan.sum())
        if n and nan_policy == "raise":
            raise InputError(
                f"--nan-policy raise: {where} holds missing y reading(s), the first at row "
                f"{a + int(np.argmax(nan))} (--nan-policy omit skips them)"
            )
        total += n
    return total


def check_x(xy: XY, where: str, block: int) -> None:
    """x sorted ascending and NaN-free, checked block by block (as the in-memory reader does)."""
    x, prev = xy.x, None
    for a in range(0, x.shape[0], block):
        xb = np.asarray(x[a : a + block])
        if xb.dtype.kind == "f" and np.isnan(xb).any():
            k = a + int(np.argmax(np.isnan(xb)))
            raise InputError(
                f"{where}: x column {xy.x_name!r} has a missing/NaN value at row {k}; every "
                "point needs a position"
            )
        full = xb if prev is None else np.concatenate([prev, xb])
        bad = full[1:] < full[:-1]
        if bad.any():
            k = int(np.argmax(bad)) + 1 + a - (0 if prev is None else 1)
            raise InputError(
                f"{where}: x column {xy.x_name!r} is not sorted ascending "
                f"(row {k}: {x[k].item()!r} after {x[k - 1].item()!r}); "
                "pass --sort to sort the rows by x"
            )
        prev = xb[-1:]


def streamed_statistics(
    path: str,
    stats: tuple[str, ...],
    *,
    x: str | None = None,
    y: str | None = None,
    chunks: int | None = None,
    size: int | None = None,
    window: int | None = None,
    step: int | None = None,
    width: str | None = None,
    center: bool = False,
    bins: str | None = None,
    windows: Any = None,
    ddof: int = 0,
    nan_policy: str = "omit",
    check: Callable[[XY], None] | None = None,
) -> tuple[XY, Any, dict[str, np.ndarray], dict[str, np.ndarray], str, int]:
    """Run the statistics of a ``.npy`` file by :func:`jaxsubset.stream`.

    Args:
        path: the ``.npy`` input.
        stats: statistic names (see :data:`STREAMED_STATS`).
        x: the x column (name or 0-based index), as ``--x``.
        y: the one y column, as ``--y``.
        chunks: as ``--chunks``; exactly one of ``chunks``, ``size``, ``window``, ``width``
            and ``bins`` is given.
        size: as ``--size``.
        window: as ``--window``, with ``step`` (default 1) as ``--step``.
        step: as ``--step``.
        width: the ``--width`` text.
        center: ``--center`` (with ``width``).
        bins: the ``--bins`` text.
        windows: the parsed options when they ask for ``--before``/``--after`` or
            ``--every``/``--period``/``--offset`` windows (then none of the others is given).
        ddof: as ``--ddof``.
        nan_policy: as ``--nan-policy``.
        check: the options' checks against the axis, run before any block of data is read
            (see :func:`read_xy`).

    Returns:
        ``(xy, ranges, bounds, values, what, n_missing)`` as the in-memory path builds them
        (``--bins``/``--width`` read by :func:`x_request`, as there).
    """
    requests = {
        "chunks": chunks,
        "size": size,
        "window": window,
        "width": width,
        "bins": bins,
        "windows": windows,
    }
    given = [k for k, v in requests.items() if v is not None]
    if len(given) != 1:
        raise TypeError(f"streamed_statistics: give exactly one of {', '.join(requests)}")
    block = 1 << 20
    xy, yy = columns(path, x, y, block)
    if check is not None:
        check(xy)  # the columns are mapped, not read: a bad option fails at once
    check_x(xy, path, block)
    n_missing = missing(yy, nan_policy, path, block)
    policy = "omit" if nan_policy == "omit" else "propagate"
    kernel_stats = tuple(s for s in stats if s != "count") or ("sum",)
    bounds: dict[str, np.ndarray] = {}
    source = _source(xy.x, yy, block)

    def run(kind: str, **kind_args: Any) -> dict[str, Any]:
        """jaxsubset.stream of ``source``, with the statistics and block every kind shares; the
        x-value kinds hold their largest subset (``capacity="auto"``: the library's own
        ranges, found in x-only passes, never a second count here)."""
        if kind not in ("chunks", "sliding"):
            kind_args["capacity"] = "auto"
        return jaxsubset.stream(
            source,
            kind,
            statistic=kernel_stats,
            ddof=ddof,
            nan_policy=policy,
            block_size=block,
            **kind_args,
        )

    try:
        if chunks is not None:
            out = run("chunks", n=chunks)
            what = f"{chunks} chunks"
        elif size is not None:
            out = run("chunks", size=size)
            what = f"chunks of {size} points"
        elif window is not None:
            if window > xy.x.shape[0]:
                raise InputError(
                    f"--window {window} is longer than the data ({xy.x.shape[0]} points)"
                )
            step = step or 1
            out = run("sliding", size=window, step=step)
            what = f"sliding windows of {window} points, step {step}"
        elif width is not None and center:
            value, what, bounds = x_request(xy, width=width, center=True)
            out = run("rolling", width=value, center=True)
        elif width is not None:
            value, what, bounds = x_request(xy, width=width)
            out = run("rolling", width=value)
        elif windows is not None and windows.before is not None:
            b, a, what, bounds = rolling_request(windows, xy)
            out = run("rolling", before=b, after=a)
        elif windows is not None:
            kw, what, bounds = dynamic_request(windows, xy)
            out = run("dynamic", **kw)
        else:
            edges, what, bounds = x_request(xy, bins=bins)
            out = run("bins", edges=edges)
    except ValueError as e:  # stream's own checks (x unsorted, NaN in x): one line
        raise InputError(f"{path}: {e}") from None
    ranges = types.SimpleNamespace(start=out["start"], count=out["count"])
    values = {}
    for st in stats:
        if st == "count":
            values[st] = out["count"].astype(np.int64)[:, None]
        else:
            values[st] = np.asarray(out[st])[:, None]
    return xy, ranges, bounds, values, what + " (streamed)", n_missing
