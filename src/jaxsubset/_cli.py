"""The ``jaxsubset`` command: ``demo`` (the motivating example) and ``stats`` (files -> table).

Bad input never shows a traceback: every problem is one line on stderr and exit status 2, and no
output file is left behind (outputs go to a temporary file renamed into place at the very end).
"""

import argparse
import contextlib
import functools
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from ._io import (
    OUTPUT_SUFFIXES,
    XY,
    InputError,
    atomic_output,
    check_output_path,
    read_table,
    read_xy,
    to_numeric,
    write_table,
)


STATS = ("count", "sum", "mean", "std", "var", "min", "max", "median")
DEFAULT_STATS = "mean,std,min,max"
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
FIGSIZE = (8.0, 4.5)  # inches; at DPI this is 800 x 450 pixels
DPI = 100


# ---------------------------------------------------------------------------- small pieces
class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not np.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


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


def parse_stats(specs: Sequence[str] | None) -> tuple[str, ...]:
    """``--stat mean,std`` (repeatable) -> the statistic names, in order, without repeats."""
    names: list[str] = []
    for spec in specs or [DEFAULT_STATS]:
        for s in spec.split(","):
            s = s.strip().lower()
            if not s:
                continue
            if s not in STATS:
                raise InputError(
                    f"--stat: unknown statistic {s!r} (choose from {', '.join(STATS)})"
                )
            if s not in names:
                names.append(s)
    if not names:
        raise InputError(f"--stat: give at least one statistic ({', '.join(STATS)})")
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


def format_table(columns: dict[str, Any]) -> str:
    """Columns as an aligned text table: a header row, then one row per entry."""
    names = list(columns)
    cells = [[_fmt(v) for v in np.asarray(columns[k]).tolist()] for k in names]
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
def _block_stats_impl(x, y, start, count, capacity: int, stats: tuple[str, ...], ddof: int):
    import jaxsubset

    s = jaxsubset.gather(x, y, jaxsubset.Ranges(start, count), capacity=capacity)
    out = {}
    for st in stats:
        if st in ("std", "var"):
            out[st] = getattr(s, st)(ddof=ddof)
        else:
            out[st] = getattr(s, st)()
    return out


@functools.cache
def _block_stats_jit():
    import jax

    return jax.jit(_block_stats_impl, static_argnames=("capacity", "stats", "ddof"))


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
        res = fn(x, y, s, c, capacity=capacity, stats=stats, ddof=ddof)
        for st in stats:
            parts[st].append(np.asarray(res[st])[: hi - lo])
        progress.advance()
    return {st: np.concatenate(parts[st], axis=0) for st in stats}


def compute_statistics(
    xy: XY, ranges: Any, stats: tuple[str, ...], *, ddof: int = 0, progress: Progress | None = None
) -> dict[str, np.ndarray]:
    """Every requested statistic of every y column over every range.

    Args:
        xy: the data.
        ranges: :class:`jaxsubset.Ranges` on ``xy.x``.
        stats: statistic names from :data:`STATS`.
        ddof: delta degrees of freedom of ``std``/``var``.
        progress: optional progress bar.

    Returns:
        statistic name -> ``(K, C)`` float64 (``count``: ``(K, 1)`` int64).
    """
    import jaxsubset

    progress = progress or Progress(None, "", enabled=False)
    start = np.asarray(ranges.start).reshape(-1)
    count = np.asarray(ranges.count).reshape(-1)
    out: dict[str, np.ndarray] = {}
    # O(N + K) prefix sums / sparse tables where the library has them (never K x capacity);
    # the median, which sorts inside padded windows, by bounded blocks of padded gathers.
    range_statistic = getattr(jaxsubset, "range_statistic", None)
    fast: tuple[str, ...] = ()
    if range_statistic is not None:
        fast = tuple(st for st in stats if st not in ("count", "median"))
    padded = tuple(st for st in stats if st != "count" and st not in fast)
    n_blocks = _blocks(count, xy.y.shape[1])[2] if padded else 0
    progress.stage("computing", total=n_blocks + bool(fast))
    if fast:
        flat = jaxsubset.Ranges(start, count, ranges.max_count)
        res = range_statistic(xy.y, flat, fast, ddof=ddof)
        out.update({st: np.asarray(res[st], dtype=np.float64) for st in fast})
        progress.advance()
    if padded:
        out.update(_gather_stats(xy.x, xy.y, start, count, padded, ddof, progress))
    if "count" in stats:
        out["count"] = count.astype(np.int64)[:, None]
    return {st: out[st] for st in stats}


# ---------------------------------------------------------------------------- stats
def read_range_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    """``--ranges FILE``: rows ``lo,hi`` of x values (half-open ``[lo, hi)``), header optional."""
    table = read_table(path)
    if len(table.names) < 2:
        raise InputError(f"{path}: a ranges file needs two columns, lo and hi, on every row")
    lo = to_numeric(table, 0, "lo").astype(np.float64)
    hi = to_numeric(table, 1, "hi").astype(np.float64)
    if len(lo) != len(hi):
        raise InputError(f"{path}: length mismatch: {len(lo)} lo values, {len(hi)} hi values")
    bad = np.isnan(lo) | np.isnan(hi)
    if bad.any():
        raise InputError(f"{path}: range {int(np.argmax(bad))} has a missing lo or hi value")
    back = hi < lo
    if back.any():
        i = int(np.argmax(back))
        raise InputError(f"{path}: range {i} has hi < lo ({hi[i]!r} < {lo[i]!r})")
    return lo, hi


def build_ranges(args: argparse.Namespace, xy: XY) -> tuple[Any, str, dict[str, np.ndarray]]:
    """The :class:`jaxsubset.Ranges` the options ask for, a description, and x bounds (if any).

    The bounds (``lo``/``hi`` columns) are reported for the requests made in x units
    (``--width``, ``--bins``, ``--ranges``); chunks and windows are index ranges.
    """
    import jaxsubset

    x = xy.x
    n = x.shape[0]
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
        r = jaxsubset.ranges.rolling(x, args.width)
        lo = x.astype(np.float64) - args.width
        return r, f"x-width windows (a - {args.width!r}, a] at every point", {"lo": lo, "hi": x}
    if args.bins is not None:
        spec = parse_bins(args.bins)
        edges = np.histogram_bin_edges(x, spec) if isinstance(spec, int) else spec
        r = jaxsubset.ranges.bins(x, edges)
        return r, f"{len(edges) - 1} bins", {"lo": edges[:-1], "hi": edges[1:]}
    lo, hi = read_range_file(args.ranges)
    r = jaxsubset.ranges.select(x, lo, hi, closed="left")
    return r, f"{len(lo)} ranges [lo, hi) from {args.ranges}", {"lo": lo, "hi": hi}


def result_columns(
    xy: XY, ranges: Any, bounds: dict[str, np.ndarray], values: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The output table: subset, start, count, x_first, x_last, [lo, hi], then the statistics.

    With several y columns the statistics are named ``<stat>_<y column>``.
    """
    start = np.asarray(ranges.start).reshape(-1).astype(np.int64)
    count = np.asarray(ranges.count).reshape(-1).astype(np.int64)
    x = xy.x
    first = x[np.minimum(start, len(x) - 1)]
    last = x[np.clip(start + count - 1, 0, len(x) - 1)]
    if (count == 0).any():
        first = np.where(count > 0, first, np.nan)
        last = np.where(count > 0, last, np.nan)
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


def run_stats(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    def info(msg: str) -> None:
        if not args.quiet:
            print(msg, file=stderr)

    inputs = [args.input] + ([args.ranges] if args.ranges else [])
    stats = parse_stats(args.stat)
    if args.bins is not None:
        parse_bins(args.bins)  # fail on a bad spec before reading the data
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
        progress.stage(f"reading {args.input}")
        xy = read_xy(args.input, args.x, args.y, sort=args.sort)
        progress.stage("finding the subsets")
        ranges, what, bounds = build_ranges(args, xy)
        values = compute_statistics(xy, ranges, stats, ddof=args.ddof, progress=progress)
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
    if args.out is None:
        print(format_table(cols), file=stdout)
    else:
        info(f"wrote {n_rows} subsets ({what}) to {args.out}")
    if args.plot is not None:
        info(f"wrote the figure to {args.plot}")
    return 0


def _stats_figure(xy: XY, ranges: Any, values: dict[str, np.ndarray], stats, what: str) -> Any:
    from ._plot import plot_subsets

    stat = next((s for s in stats if s != "count"), stats[0])

    def label(name: str) -> str:  # headerless files name their columns "0", "1", ...
        return f"column {name}" if name.isdigit() else name

    v = values[stat][:, 0].astype(np.float64)
    fig, ax = _new_figure()
    plot_subsets(
        xy.x,
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
  precision. Outputs appear complete or not at all, and the input is never overwritten.
  Errors are one line on stderr with exit status 2.

examples:
  jaxsubset stats data.csv --chunks 10
  jaxsubset stats data.tsv --x 0 --y 2 --window 100 --step 50 --stat mean,max --out w.json
  jaxsubset stats log.csv --x t --y a --y b --bins 0,10,20,30 --stat sum --quiet
  jaxsubset stats unsorted.csv --sort --width 1.0 --plot rolling.png
"""


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
        type=_positive_float,
        metavar="W",
        help="at every point a, the window a - W < x <= a, e.g. --width 2.5",
    )
    mode.add_argument(
        "--bins",
        metavar="N|EDGES",
        help="N equal-width bins, or comma-separated edges, e.g. --bins 20 or --bins 0,1,2.5,10",
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
        help=f"comma-separated statistics from {', '.join(STATS)} (default: {DEFAULT_STATS}), "
        "e.g. --stat mean,median",
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
        "--sort", action="store_true", help="sort the rows by x instead of rejecting an unsorted x"
    )
    st.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no messages on stderr (errors still shown)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``jaxsubset`` command; returns the exit status (0 ok, 2 bad input).

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
    try:
        import jax

        jax.config.update("jax_enable_x64", True)  # the data's float64 precision, kept
        if args.command == "demo":
            from ._demo import run_demo

            return run_demo(
                args.out, args.n_points, args.n_subsets, stdout=stdout, quiet=args.quiet
            )
        return run_stats(args, stdout, stderr)
    except (InputError, ValueError, TypeError) as e:
        msg = " ".join(str(e).split()) or type(e).__name__
        print(f"jaxsubset {args.command}: error: {msg}", file=stderr)
        return 2
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
