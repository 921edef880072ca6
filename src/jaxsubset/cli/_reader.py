"""Reading the ``(x, y)`` columns of the command's input files.

Readers: CSV/TSV/whitespace text (header detected; pyarrow's CSV reader, see :mod:`._text`),
``.npy`` (a 2-column array, a pair of rows, a 1-D array or a structured array), ``.npz``
(arrays by key) and Parquet. Columns are chosen by name or by 0-based index.

The columns are known before the data is read (a text file's head, a ``.npy`` header, the
``.npz`` members, the Parquet schema): a column that is not there, or an option that does not
fit the x axis (``check`` of :func:`read_xy`), is reported before the file is read, and only
the columns asked for are read.

Time axes: a text column of ISO-8601 dates or datetimes (``2001-12-29``, ``2001-12-29T06:00``,
``2001-12-29 06:00:00``, optionally ``Z`` or ``+01:00``, converted to UTC), a column of any
``strptime`` format given as ``x_format`` (``%Y%m%d`` for ``20011229``), or a datetime64/timestamp
column of a ``.npy``/``.npz``/Parquet file becomes exact int64 nanoseconds since the epoch.

Every problem with a file is an :class:`InputError` with a one-line message naming the file, the
column or the line.
"""

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ._binary import KIND_NAMES, read_npy, read_npz, read_parquet, sniff
from ._dates import iso_strings
from ._files import INPUT_SUFFIXES, InputError, suffix
from ._table import Table, column_index, to_numeric, to_time
from ._text import Head, cell_texts, inspect_text, line_locator, read_careful, read_direct
from ._writer import format_value


def checked_path(path: str | os.PathLike) -> tuple[str, str]:
    """``(path, kind)``: the file checked to be a regular file of a known format; ``kind`` is
    ``"npy"``, ``"npz"``, ``"parquet"`` (by content) or ``"text"``."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder, not a file")
    if not os.path.isfile(path):  # a pipe or a device would block or never end
        raise InputError(f"{path}: not a regular file (a pipe or a device?); give a data file")
    ext = suffix(path)
    if ext not in INPUT_SUFFIXES:
        raise InputError(
            f"{path}: unsupported input format {ext!r} "
            "(use .csv, .tsv, .txt, .dat, .npy, .npz or .parquet)"
        )
    kind = sniff(path)  # by content: an .npz named .npy is read as the archive it is
    named = {".npy": "npy", ".npz": "npz", ".parquet": "parquet", ".pq": "parquet"}.get(ext)
    if named is not None and kind is None:
        sig = {"npy": "\\x93NUMPY", "npz": "PK (zip)", "parquet": "PAR1"}[named]
        raise InputError(
            f"{path}: the file is not {KIND_NAMES[named]}: it does not start with {sig} "
            "(an empty, truncated or different kind of file?)"
        )
    return path, kind or "text"


def text_delimiter(path: str) -> str | None:
    return "\t" if suffix(path) in (".tsv", ".tab") else None


def read_table(
    path: str | os.PathLike, x_format: str | None = None, *, mmap: bool = False
) -> Table:
    """Read every column of a file into a :class:`Table` (text stays text until converted).

    Args:
        path: a ``.csv``, ``.tsv``, ``.txt``/``.dat`` (whitespace), ``.npy``, ``.npz`` or
            ``.parquet`` file.
        x_format: a ``strptime`` format of dates in the file; text of that form (like numbers
            and ISO dates) is data, not a header, when a header is detected.
        mmap: memory-map a ``.npy`` file (its columns are views; nothing is loaded).

    Returns:
        The file's columns and their names.

    Raises:
        InputError: the file is missing, unreadable, empty, or of an unknown format.
    """
    path, kind = checked_path(path)
    if kind == "npy":
        table = read_npy(path, mmap)
    elif kind == "npz":
        table = read_npz(path)
    elif kind == "parquet":
        table = read_parquet(path)
    else:
        table = read_careful(path, text_delimiter(path), x_format)
    return no_data_check(table)


def no_data_check(table: Table) -> Table:
    loaded = [c for c in table.columns if c is not None]
    if not table.names or (loaded and all(len(c) == 0 for c in loaded)):
        raise InputError(f"{table.path}: the file holds no data")
    return table


# ---------------------------------------------------------------------------- (x, y) data
@dataclass
class XY:
    """The ``(x, y)`` data the command works on.

    Attributes:
        x: ``(N,)`` int64 or float64, sorted ascending, no NaN.
        y: ``(N, C)`` float64, one column per requested y column (NaN = missing).
        x_name: the x column's name (``"index"`` when the file has a single column).
        y_names: the ``C`` y column names.
        sorted_rows: True when the rows were reordered by ``--sort``.
        x_time: True when x is a time axis: ``x`` then holds int64 nanoseconds since the epoch.
        rows: after ``--sort``, the file's row (0-based) of every point, ``(N,)`` int64.
        locate: a row of the file (0-based) -> its place, ``"line 12"`` or ``"row 3"``.
    """

    x: np.ndarray
    y: np.ndarray
    x_name: str
    y_names: list[str]
    sorted_rows: bool = False
    x_time: bool = False
    rows: np.ndarray | None = None
    locate: Callable[[int], str] | None = None

    def where(self, row: int) -> str:
        """Where point ``row`` (in the order of ``x``) is in the file, for messages."""
        r = int(self.rows[row]) if self.rows is not None else row
        return self.locate(r) if self.locate is not None else f"row {r}"


class Input:
    """An input file whose columns are known and not yet read: the head of a text file, the
    header of a (memory-mapped) ``.npy``, the members of an ``.npz``, the Parquet schema."""

    def __init__(self, path: str | os.PathLike, x_format: str | None) -> None:
        self.path, self.kind = checked_path(path)
        self.x_format = x_format
        self.head: Head | None = None
        self.table: Table | None = None
        if self.kind == "text":
            self.head = inspect_text(self.path, text_delimiter(self.path), x_format)
        elif self.kind == "npy":
            self.table = no_data_check(read_npy(self.path, mmap=True))
        elif self.kind == "npz":
            self.table = read_npz(self.path, keep=[])
        else:
            self.table = read_parquet(self.path, keep=[])
        known = self.head if self.head is not None else self.table
        assert known is not None
        self.names: list[str] = known.names
        self.header: bool = known.header

    def axis(self, ix: int) -> tuple[bool, np.dtype] | None:
        """``(time, dtype)`` of the x column ``ix`` as it will be read, or None where only
        the data can tell (a text column with no filled cell in the head, text in a binary
        file)."""
        if self.head is not None:
            time = self.head.time_hint(ix, self.x_format)
            if time is None:
                return None
            integer = not time and self.head.integer_hint(ix)
            return time, np.dtype(np.int64 if time or integer else np.float64)
        assert self.table is not None
        col = self.table.columns[ix]
        if col is not None:
            kind = col.dtype.kind
        else:  # not loaded: the dtype its reader declared
            kind = self.table.dtypes[ix].kind if self.table.dtypes else "O"
        if kind in "UO" and self.x_format is None:
            return None
        time = kind == "M" or self.x_format is not None
        return time, np.dtype(np.int64 if time or kind in "biu" else np.float64)

    def load(self, ix: int, iy: Sequence[int]) -> Table:
        """The x column ``ix`` and the y columns ``iy`` read (the others may stay None)."""
        keep = sorted({ix, *iy})
        if self.head is not None:
            return self._load_text(self.head, ix, keep)
        assert self.table is not None
        if self.kind == "npz" and any(self.table.columns[j] is None for j in keep):
            return no_data_check(read_npz(self.path, keep))
        if self.kind == "parquet" and any(self.table.columns[j] is None for j in keep):
            return no_data_check(read_parquet(self.path, keep))
        return self.table

    def _load_text(self, head: Head, ix: int, keep: list[int]) -> Table:
        """The direct road where the head allows it (x typed as its head suggests, y as
        float64), else the careful one."""
        got = None
        time = head.time_hint(ix, self.x_format)
        tries = ["time"] if time else ["int", "float"] if head.integer_hint(ix) else ["float"]
        for x_kind in tries if head.direct and time is not None else []:
            kinds = {j: (x_kind if j == ix else "float") for j in keep}
            got = read_direct(head, kinds, self.x_format, complete=ix)
            if got is not None:  # an x of integers in the head and fractions later: floats
                break
        if got is None:
            return no_data_check(read_careful(self.path, head.delimiter, self.x_format, keep))
        read, rows = got
        if rows == 0:
            raise InputError(f"{self.path}: the file has a header but no data rows")
        cols: list[np.ndarray | None] = [read.get(j) for j in range(len(head.names))]
        x = read[ix]
        if x_kind == "time":
            cols[ix] = x.view("datetime64[ns]")
        elif x_kind == "int" and not np.any((x > 2**53) | (x < -(2**53))):
            cols[ix] = x.astype(np.float64)  # as the careful road: exact integers stay int64

        def text(j: int, rows: list[int]) -> list[str]:
            return cell_texts(head, j, rows)

        return Table(self.path, head.names, cols, head.header, locate=line_locator(head), text=text)


def read_xy(
    path: str | os.PathLike,
    x: str | int | None = None,
    y: Sequence[str | int] | None = None,
    *,
    sort: bool = False,
    x_format: str | None = None,
    check: Callable[[XY], None] | None = None,
) -> XY:
    """Read the x column and the y column(s) of a file, checked for the analysis.

    Defaults: x is the first column and y the second (a ``.npz`` with arrays ``x`` and ``y``
    uses those); a file with a single column is y, with x the row index 0, 1, ...
    An x column of dates (see :func:`to_time`) is a time axis of int64 nanoseconds. Duplicate
    x values are legal and keep their order in the file (``sort`` is stable).

    Args:
        path: the input file (see :func:`read_table` for the formats).
        x: x column, by name or 0-based index.
        y: y columns, by name or 0-based index.
        sort: reorder the rows by x (stable) instead of rejecting an unsorted x.
        x_format: a ``strptime`` format of the x column's dates (``"%Y%m%d"``).
        check: called with an :class:`XY` of no points (its names, its axis: ``x_time`` and
            the dtype of ``x``) before the data is read where the file's head tells the axis,
            else right after: the options are checked against the axis there.

    Returns:
        An :class:`XY`.

    Raises:
        InputError: unknown or non-numeric column, length mismatch, NaN in x, x not sorted.
    """
    source = Input(path, x_format)
    path = source.path
    names = source.names
    if x is None and y is None and len(names) == 1 and x_format is None:
        if check is not None:
            check(XY(np.empty(0, np.int64), np.empty((0, 1)), "index", [names[0]]))
        table = source.load(0, [])
        yy = to_numeric(table, 0, "y").astype(np.float64)
        return XY(np.arange(len(yy), dtype=np.int64), yy[:, None], "index", [names[0]])
    if x is None:
        x = "x" if ("x" in names and source.header) else 0
    ix = column_index(path, names, x, "x")
    if not y:
        if "y" in names and source.header and names.index("y") != ix:
            y = ["y"]
        else:
            rest = [i for i in range(len(names)) if i != ix]
            if not rest:
                raise InputError(f"{path}: needs a y column besides the x column {names[ix]!r}")
            y = [rest[0]]
    iy = [column_index(path, names, spec, "y") for spec in y]
    y_names = [names[i] for i in iy]
    axis = source.axis(ix)
    if check is not None and axis is not None:  # the options, before the data is read
        check(XY(np.empty(0, axis[1]), np.empty((0, len(iy))), names[ix], y_names, x_time=axis[0]))
    table = source.load(ix, iy)
    xt = to_time(table, ix, "x", x_format)
    xv = to_numeric(table, ix, "x") if xt is None else xt
    if check is not None and axis is None:
        check(XY(xv[:0], np.empty((0, len(iy))), names[ix], y_names, x_time=xt is not None))
    ys = [to_numeric(table, i, "y").astype(np.float64) for i in iy]
    for i, col in zip(iy, ys, strict=True):
        if len(col) != len(xv):
            raise InputError(
                f"{path}: length mismatch: x column {names[ix]!r} has {len(xv)} values, "
                f"y column {names[i]!r} has {len(col)}"
            )
    if xt is None and xv.dtype.kind == "f":
        nan = np.isnan(xv)
        if nan.any():
            k = int(np.argmax(nan))
            raise InputError(
                f"{path}: x column {names[ix]!r} has {int(nan.sum())} missing/NaN value(s), "
                f"the first at {table.where(k)}; every point needs a position"
            )
    yv = np.stack(ys, axis=1)
    xy = XY(xv, yv, names[ix], y_names, x_time=xt is not None, locate=table.where)
    return sorted_xy(xy, table, ix, sort)


def sorted_xy(xy: XY, table: Table, ix: int, sort: bool) -> XY:
    """``xy`` with x checked to be sorted ascending, or sorted (stable) when ``sort``."""
    xv = xy.x
    if xv.size < 2:
        return xy
    bad = xv[1:] < xv[:-1]
    if not bad.any():
        return xy
    if not sort:
        k = int(np.argmax(bad))
        after, before = cells(xy, table, ix, [k + 1, k])
        raise InputError(
            f"{table.path}: x column {xy.x_name!r} is not sorted ascending "
            f"({table.where(k + 1)}: {after} after {before}); pass --sort to sort the rows by x"
        )
    order = np.argsort(xv, kind="stable")
    xy.x, xy.y, xy.sorted_rows, xy.rows = xv[order], xy.y[order], True, order
    return xy


def cells(xy: XY, table: Table, ix: int, rows: list[int]) -> list[str]:
    """The x cells of ``rows`` as the file writes them (its text, where the reader kept it or
    can read it back), else as values."""
    raw = table.column(ix)
    if raw.dtype.kind == "U":
        return [str(raw[r]).strip() for r in rows]
    if xy.x_time and table.text is not None:
        return table.text(ix, rows)
    if xy.x_time:
        return [str(iso_strings(np.array([xy.x[r]]).view("datetime64[ns]"))[0]) for r in rows]
    return [format_value(xy.x[r]) for r in rows]
