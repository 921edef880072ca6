"""The ``jaxsubset`` command line: the parser, exit statuses, signals."""

import argparse
import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

import numpy as np

import jaxsubset

from ._cache import JaxSession
from ._files import InputError
from ._options import COUNTS, DEFAULT_STATS, PERIOD, STATS
from ._stats import run_stats
from ._windows import extent_arg


NAN_POLICIES = ("omit", "propagate", "raise")


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def number_arg(convert: Any, minimum: float, what: str, maximum: float | None = None) -> Any:
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
                f"expected {what} of at most {MAX_TEXT.get(maximum, maximum)}, got {text!r}"
            )
        return v

    return parse


MAX_INT = 2**62  # counts, sizes and steps: beyond any data, and clear of int64 overflow
MAX_DDOF = 2**31 - 1  # a traced int32 in JAX's default mode
MAX_TEXT: dict[float, str] = {MAX_INT: "2**62", MAX_DDOF: "2**31-1"}
positive_int = number_arg(int, 1, "a positive integer", MAX_INT)
nonneg_int = number_arg(int, 0, "an integer >= 0", MAX_DDOF)
nonneg_float = number_arg(float, 0.0, "a number >= 0")


def width_arg(text: str) -> str:
    """``--width``: a positive number, or (checked against the axis later) a duration."""
    try:
        v = float(text)
    except ValueError:
        if PERIOD.match(text):
            return text.strip()
        raise argparse.ArgumentTypeError(
            f"expected a positive number, or a duration such as 7D on a time axis, got {text!r}"
        ) from None
    if not np.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return text.strip()


MAIN_EPILOG = """\
examples:
  jaxsubset demo --out demo-out
  jaxsubset stats data.csv --x time --y signal --chunks 10 --stat mean,std
  jaxsubset stats data.csv --width 2.5 --stat mean --out rolling.csv --plot rolling.png
"""

STATS_EPILOG = """\
subsets (choose exactly one):
  --chunks 10            10 pieces of (almost) equal size, as numpy.array_split
  --size 500             pieces of 500 points, the last one shorter
  --window 50 --step 10  sliding windows of 50 points, one every 10 points
  --width 2.5            at every point a, the points with a - 2.5 < x <= a (pandas rolling)
  --width 2.5 --center   centred: a - 1.25 < x <= a + 1.25 (pandas rolling(center=True))
  --before 2 --after 1   asymmetric: a - 2 < x <= a + 1 (--after alone: --before 0)
  --every 5              tumbling windows [s, s + 5), s = 0, 5, 10, ... from the first point
  --every 5 --period 8   hopping windows [s, s + 8) every 5 (polars group_by_dynamic;
                         --offset 1 shifts the starts: s = 1, 6, 11, ...; empty windows kept)
  --bins 20              20 equal-width bins over [min x, max x], as numpy.histogram
  --bins 0,1,2.5,10      bins with these edges: [0,1) [1,2.5) [2.5,10]
  --ranges cuts.csv      one subset per row lo,hi of the file: the points with lo <= x < hi

time axes (an x column of dates):
  ISO-8601 dates or datetimes (2001-12-29, 2001-12-29T06:00, 2001-12-29 06:00:00, with Z or
  +01:00 converted to UTC) are recognised; other forms with --x-format (strptime), e.g.
  --x-format %Y%m%d for 20011229. Then:
  --width 7D             durations: W (7 days), D, h, min, s, ms, us, ns (a number alone is
                         an error: say the unit); also --before 3D --after 12h
  --every 1D --period 7D windows from midnight (multiples of --every since 1970-01-01);
                         --every 1M, 3M, 1Y: calendar windows from the 1st of a month
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
                         blank lines and lines starting with '#' are skipped (read by
                         pyarrow's CSV reader: pip install 'jaxsubset[cli]')
  .npy                   a 2-column array (x, y), a pair of rows (2, N), or a 1-D y
  .npz                   arrays by key
  .parquet               columns by name (pyarrow, as text files)
  Columns and options are checked against the file's header before its data is read.
  By default x and y are the columns named x and y, else the first and the second column;
  a file with a single column is y against its row index.

output:
  an aligned table on stdout, or --out FILE (.csv, .tsv, .json or .parquet) with the columns
  subset, start, count, x_first, x_last, [lo, hi], then one per statistic (with several --y,
  one per statistic and column: mean_a, mean_b, count_a, valid_a...); numbers keep full
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
  jaxsubset stats log.csv --x time --every 1D --period 7D --stat mean,max
"""


DEBUG_HELP = "on an unexpected error (a bug to report), also print the Python traceback"


NO_CACHE_HELP = (
    "do not use the compilation cache (default: compiled programs are kept in "
    "$XDG_CACHE_HOME/jaxsubset/jax or ~/.cache/jaxsubset/jax, so a later run skips "
    "compiling; JAXSUBSET_NO_CACHE=1 does the same)"
)


def build_parser() -> argparse.ArgumentParser:
    """The ``jaxsubset`` argument parser (``demo`` and ``stats`` subcommands)."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = Parser(
        prog="jaxsubset",
        description="Statistics over subsets (chunks, windows, x-ranges, bins) of 1-D (x, y) "
        "data, computed with JAX.",
        epilog=MAIN_EPILOG,
        formatter_class=fmt,
    )
    version = f"jaxsubset {jaxsubset.__version__}"
    parser.add_argument("--version", action="version", version=version)
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
        type=positive_int,
        default=1000,
        metavar="N",
        help="number of points (default: 1000), e.g. --n-points 100000",
    )
    demo.add_argument(
        "--n-subsets",
        type=positive_int,
        default=5,
        metavar="K",
        help="number of subsets, 1 to 100 (default: 5), e.g. --n-subsets 8",
    )
    demo.add_argument("--quiet", action="store_true", help="print nothing, only write figures")
    demo.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    demo.add_argument("--no-cache", action="store_true", help=NO_CACHE_HELP)

    st = sub.add_parser(
        "stats",
        help="per-subset statistics of the (x, y) columns of a file",
        description="Per-subset statistics of a file's (x, y) columns. x must be sorted "
        "ascending (or pass --sort).",
        epilog=STATS_EPILOG,
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
        type=positive_int,
        metavar="N",
        help="N pieces as numpy.array_split, e.g. --chunks 10",
    )
    mode.add_argument(
        "--size",
        type=positive_int,
        metavar="S",
        help="pieces of S points, the last shorter, e.g. --size 500",
    )
    mode.add_argument(
        "--window",
        type=positive_int,
        metavar="S",
        help="sliding windows of S points (see --step), e.g. --window 50",
    )
    mode.add_argument(
        "--width",
        type=width_arg,
        metavar="W",
        help="at every point a, the window a - W < x <= a; a duration on a time axis, "
        "e.g. --width 2.5 or --width 7D",
    )
    mode.add_argument(
        "--before",
        type=extent_arg(False),
        metavar="B",
        help="at every point a, the window a - B < x <= a + A (see --after, default 0); a "
        "duration on a time axis, e.g. --before 2 --after 1 or --before 3D --after 12h",
    )
    mode.add_argument(
        "--every",
        type=extent_arg(True),
        metavar="E",
        help="hopping/tumbling windows [s, s + P) starting every E (polars group_by_dynamic; "
        "see --period, --offset); on a time axis a duration or 1M/3M/1Y, e.g. --every 7D",
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
        type=positive_int,
        metavar="T",
        default=None,
        help="with --window: points between window starts (default 1), e.g. --step 10",
    )
    st.add_argument(
        "--center",
        action="store_true",
        help="with --width: centre each window on its point, a - W/2 < x <= a + W/2 (pandas "
        "rolling(W, center=True))",
    )
    st.add_argument(
        "--after",
        type=extent_arg(False),
        metavar="A",
        default=None,
        help="with --before: how far each window reaches past its point (default 0), e.g. "
        "--after 1.5 or --after 12h",
    )
    st.add_argument(
        "--period",
        type=extent_arg(True),
        metavar="P",
        default=None,
        help="with --every: the window length (default E: tumbling windows), e.g. --period 10",
    )
    st.add_argument(
        "--offset",
        type=extent_arg(False, signed=True),
        metavar="O",
        default=None,
        help="with --every: shift of the window starts (may be negative), e.g. --offset -2h",
    )
    st.add_argument(
        "--stat",
        action="append",
        metavar="LIST",
        default=None,
        help=f"comma-separated statistics from {', '.join(STATS + COUNTS)}, or q0.9 for the "
        f"0.9-quantile (default: {DEFAULT_STATS}; valid: the real readings per subset), e.g. "
        "--stat mean,median,q0.9",
    )
    st.add_argument(
        "--ddof",
        type=nonneg_int,
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
        type=nonneg_float,
        metavar="MB",
        default=1000.0,
        help=".npy inputs larger than this many megabytes (default 1000) are streamed block by "
        "block through one compiled kernel instead of being read whole (not with --plot, "
        "--sort, --ranges, calendar --every or several --y), e.g. --stream-above 0 to always "
        "stream",
    )
    st.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no messages on stderr (errors still shown)",
    )
    st.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    st.add_argument("--no-cache", action="store_true", help=NO_CACHE_HELP)
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
        >>> from jaxsubset.cli import main
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
    debug = bool(args.debug)
    # jax is imported by session.start(), once the options and the input's header are checked
    # (a bad option on a big file is reported in milliseconds, not after `import jax`)
    session = JaxSession(bool(args.no_cache))
    try:
        with signals_clean_up(), session:
            if args.command == "demo":
                from ._demo import run_demo

                session.start()
                return run_demo(
                    args.out, args.n_points, args.n_subsets, stdout=stdout, quiet=args.quiet
                )
            return run_stats(args, stdout, stderr, session=session)
    except InputError as e:  # the documented input errors: exit status 2
        trace(debug, stderr)
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
        trace(debug, stderr)
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
        session.close()  # an in-process caller keeps its JAX mode and cache settings


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread so every ``atomic_output`` removes
    its temporary file on the way out, as for Ctrl-C (``KeyboardInterrupt``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def signals_clean_up():
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


def trace(debug: bool, stderr: TextIO) -> None:
    """With ``--debug``, the traceback of the exception being handled."""
    if debug:
        traceback.print_exc(file=stderr)
