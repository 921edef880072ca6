"""A file's named columns, and their conversion to the numbers and dates the command works on.

Every reader (text, ``.npy``, ``.npz``, Parquet) gives a :class:`Table`; :func:`to_numeric` and
:func:`to_time` turn one of its columns into float64/int64 numbers or int64 nanoseconds, with a
one-line :class:`InputError` naming the file, the column and the line of the first bad cell.
"""

import contextlib
import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._dates import checked_ns, is_iso_date, parse_dates
from ._files import InputError


# besides the empty cell, the texts of a missing value (any case, around spaces stripped)
MISSING_TEXT = ("na", "n/a", "nan", "null", "none")


@dataclass
class Table:
    """Named columns read from a file.

    Attributes:
        path: the file the columns came from.
        names: one name per column (from the header, the ``.npz`` keys, or ``"0"``, ``"1"``...).
        columns: one 1-D array per column: text (``U``) where the reader kept the file's text,
            else numbers or ``datetime64``; None for a column that was not read.
        header: whether the names came from the file.
        lines: for text read line by line, the 1-based line number of every data row.
        locate: for text read by pyarrow, data row (0-based) -> its place, ``"line 12"``.
        text: for columns read typed from text, ``(column, rows)`` -> the cells' own text (to
            quote them in a message); None where the columns hold the text themselves.
        dtypes: the dtype of every column as its reader declares it, for columns not read.
    """

    path: str
    names: list[str]
    columns: list[np.ndarray | None]
    header: bool = False
    lines: list[int] | None = None
    locate: Callable[[int], str] | None = None
    text: Callable[[int, list[int]], list[str]] | None = None
    dtypes: list[np.dtype] | None = None

    def where(self, row: int) -> str:
        """Where data row ``row`` (0-based) is in the file, for messages."""
        if self.lines:
            return f"line {self.lines[row]}"
        if self.locate is not None:
            return self.locate(row)
        return f"row {row}"

    def column(self, index: int) -> np.ndarray:
        col = self.columns[index]
        if col is None:  # pragma: no cover - the readers load every column they are asked for
            raise RuntimeError(f"column {index} of {self.path} was not read")
        return col

    def index_of(self, spec: str | int, role: str) -> int:
        """The position of the column named (or numbered, from 0) ``spec``."""
        return column_index(self.path, self.names, spec, role)


def column_index(path: str, names: list[str], spec: str | int, role: str) -> int:
    """The position in ``names`` of the column named (or numbered, from 0) ``spec``.

    Raises:
        InputError: no such column; the message lists the columns there are.
    """
    spec = str(spec).strip()
    if spec in names:
        return names.index(spec)
    try:
        i = int(spec)
    except ValueError:
        i = None
    if i is not None and 0 <= i < len(names):
        return i
    known = ", ".join(repr(n) for n in names[:12])
    more = ", ..." if len(names) > 12 else ""
    raise InputError(
        f"{path}: no {role} column {spec!r}; the columns are {known}{more} "
        f"(or a 0-based index below {len(names)})"
    )


def is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def is_value(field: str, x_format: str | None) -> bool:
    """A field that is data, not a header name: a number, an ISO date, or an ``x_format`` date."""
    if is_number(field) or is_iso_date(field):
        return True
    if x_format is not None:
        try:
            _dt.datetime.strptime(field, x_format)
        except ValueError:
            return False
        return True
    return False


def to_numeric(table: Table, index: int, role: str) -> np.ndarray:
    """Column ``index`` of ``table`` as a 1-D int64 or float64 array, or a one-line error.

    Numbers become float64, except integers beyond 2**53, which float64 cannot hold exactly
    (nanosecond time stamps): those become int64; an empty cell is a missing value (NaN). A
    column with no values, or a cell that is not a number, is an :class:`InputError` naming the
    column and the line.
    """
    name = table.names[index]
    col = table.column(index)
    label = f"{table.path}: {role} column {name!r}"
    if col.size == 0:
        raise InputError(f"{label} is empty")
    if col.dtype.kind == "u" and col.dtype.itemsize == 8 and col.size and col.max() >= 2**63:
        return col.astype(np.float64)  # beyond int64: as float64 (rounded), never wrapped
    if col.dtype.kind in "iub":
        return col.astype(np.int64)
    if col.dtype.kind == "f":
        return col.astype(np.float64)
    if col.dtype.kind in "mM":
        raise InputError(f"{label} holds dates or times; only the x column may be a time axis")
    if col.dtype.kind not in "UO":
        raise InputError(f"{label} is not numeric (dtype {col.dtype})")
    if col.dtype.kind == "U":
        arr = np.char.strip(col)
    else:  # objects (e.g. Parquet strings with nulls)
        arr = np.array([("" if v is None else str(v).strip()) for v in col.tolist()], dtype=str)
    if not np.any(arr != ""):
        raise InputError(f"{label} is empty")
    with contextlib.suppress(ValueError, OverflowError):
        ints = arr.astype(np.int64)
        # Integers float64 cannot hold exactly (e.g. nanosecond time stamps) stay int64.
        return ints if np.any(np.abs(ints) > 2**53) else ints.astype(np.float64)
    with contextlib.suppress(ValueError):
        return arr.astype(np.float64)
    strings = arr.tolist()
    out = np.empty(len(strings), np.float64)
    for i, s in enumerate(strings):
        if s == "" or s.lower() in MISSING_TEXT:
            out[i] = np.nan
            continue
        try:
            out[i] = float(s)
        except ValueError:
            hint = ""
            if is_iso_date(s):
                hint = " (a date: only the x column may be a time axis)"
            raise InputError(
                f"{label} is not numeric: {table.where(i)} holds {s!r}{hint}"
            ) from None
    return out


def to_time(table: Table, index: int, role: str, x_format: str | None = None) -> np.ndarray | None:
    """Column ``index`` as int64 nanoseconds when it holds dates, else None (it is numbers).

    A datetime64/timestamp column is a time axis; with ``x_format`` every column is read as
    dates of that ``strptime`` format (numbers such as ``20011229`` as their digits); otherwise
    a text column whose first value is an ISO-8601 date is a time axis.
    """
    name = table.names[index]
    col = table.column(index)
    label = f"{table.path}: {role} column {name!r}"
    if col.size == 0:
        raise InputError(f"{label} is empty")
    if col.dtype.kind == "M":
        return checked_ns(col, label, table.where)
    if col.dtype.kind == "m":
        raise InputError(f"{label} holds durations, not dates; an x axis of dates is supported")
    if col.dtype.kind == "O":
        col = np.array([("" if v is None else str(v).strip()) for v in col.tolist()], dtype=str)
    if x_format is not None:
        if col.dtype.kind in "biu":
            col = col.astype(np.int64).astype(str)
        elif col.dtype.kind == "f":
            col = np.array(
                [
                    "" if v != v else (str(int(v)) if v.is_integer() else repr(v))
                    for v in col.tolist()
                ],
                dtype=str,
            )
        elif col.dtype.kind != "U":
            raise InputError(f"{label} cannot be read as dates (dtype {col.dtype})")
        return parse_dates(col, label, table.where, x_format)
    if col.dtype.kind != "U":
        return None
    filled = col[np.char.strip(col) != ""]
    if filled.size == 0 or not is_iso_date(str(filled[0])):
        return None
    return parse_dates(col, label, table.where)
