"""Reading delimited text (CSV, TSV, whitespace columns) with pyarrow's CSV reader.

:func:`inspect_text` reads only the head of the file (its first 64 KiB): the delimiter, the header
and the first rows, so columns and options are checked before any data is read. Then one of
two roads reads the columns:

- the direct road (:func:`read_direct`): pyarrow streams the file itself (``open_csv``), typed
  (float64, int64, ``timestamp[ns]``, dates parsed by pyarrow: ISO-8601, or ``x_format``),
  multithreaded, converting only the columns asked for into NumPy arrays as it goes.
- the careful road (:func:`read_careful`): Python splits the lines (blank lines and ``#``
  comments skipped, every line numbered) and pyarrow splits their fields into text; the
  conversions of :mod:`._table` then name the line of the first bad cell.

The direct road gives up (None) on anything it cannot read exactly as the careful road would:
a cell that is not a number or date, a row of the wrong width, a missing x, comments after the
head; the careful road then reads the file and says what is wrong. Both give the same numbers
(pyarrow's float parsing is correctly rounded, as Python's).
"""

import codecs
import csv
import mmap
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._binary import PYARROW_HINT
from ._dates import is_iso_date
from ._files import InputError, check_memory
from ._table import MISSING_TEXT, Table, is_value


HEAD_BYTES = 1 << 16  # the head read to find the header, the delimiter and the first rows
HEAD_ROWS = 200  # data rows of the head kept to guess the columns' types
BLOCK_BYTES = 4 << 20  # pyarrow's block: a row longer than this is read the careful way
# Python's str.splitlines breaks lines at these too; pyarrow does not (the careful road reads
# a file holding them, so that both roads see the same lines)
ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# every spelling of a missing value (MISSING_TEXT in any case) and the empty cell
NULLS = sorted(
    {
        "".join(c.upper() if mask >> i & 1 else c for i, c in enumerate(word))
        for word in MISSING_TEXT
        for mask in range(1 << len(word))
    }
    | {""}
)


def arrow() -> tuple[Any, Any]:
    """``(pyarrow, pyarrow.csv)``, or an :class:`InputError` saying how to install them."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        raise InputError(f"reading text files needs pyarrow: {PYARROW_HINT}") from None
    return pa, pcsv


@dataclass
class Head:
    """What the head of a text file says about it.

    Attributes:
        path: the file.
        delimiter: ``","``, ``"\\t"``, ``";"`` or None (fields separated by runs of spaces).
        names: the column names (the header's, or ``"0"``, ``"1"``...).
        header: whether the first line is a header.
        rows: the fields (stripped) of the first data rows, at most :data:`HEAD_ROWS`.
        offset: the byte offset of the first data row.
        line: its 1-based line number.
        direct: whether pyarrow may read the file itself (see :func:`inspect_text`).
        end: the byte offset where the head ends.
    """

    path: str
    delimiter: str | None
    names: list[str]
    header: bool
    rows: list[list[str]] = field(default_factory=list)
    offset: int = 0
    line: int = 1
    direct: bool = True
    end: int = 0

    def time_hint(self, index: int, x_format: str | None) -> bool | None:
        """Whether column ``index`` holds dates, judged by its first filled cell in the head
        (as the careful road does by the column's first filled cell); None when the head has
        no filled cell there."""
        if x_format is not None:
            return True
        for row in self.rows:
            if index < len(row) and row[index]:
                return is_iso_date(row[index])
        return None

    def integer_hint(self, index: int) -> bool:
        """Whether the head's cells of column ``index`` are all integers (read as int64, so
        that integers beyond 2**53 stay exact, as the careful road keeps them)."""
        cells = [row[index] for row in self.rows if index < len(row) and row[index]]
        return bool(cells) and all(c.lstrip("+-").isdigit() for c in cells)


def split_fields(line: str, delimiter: str | None, number: int) -> list[str]:
    """The stripped fields of one line (the csv module's quoting), or a one-line error."""
    if delimiter is None:
        return line.split()
    try:
        return [f.strip() for f in next(csv.reader([line], delimiter=delimiter, strict=True))]
    except csv.Error as e:
        raise csv.Error(f"line {number}: {e} (an unterminated or misplaced quote?)") from None


def sniff_delimiter(line: str) -> str | None:
    return next((d for d in ("\t", ",", ";") if d in line), None)


def is_skipped(line: str) -> bool:
    """A blank line or a ``#`` comment: not data."""
    body = line.strip()
    return not body or body.startswith("#")


def inspect_text(
    path: str, delimiter: str | None, x_format: str | None, size: int = HEAD_BYTES
) -> Head:
    """The :class:`Head` of a text file, from its first 64 KiB (more where the comments before
    the header or the header itself are longer).

    The direct road is ruled out (``direct=False``) where pyarrow would not split the file
    into the same rows as the careful road: a single column, blank lines of spaces or comments
    after the header, line breaks other than ``\\n``/``\\r``, whitespace columns other than
    single spaces, a first line longer than the head.

    Raises:
        InputError: the head is not UTF-8 text, holds NUL bytes, no data, or a header only.
    """
    with open(path, "rb") as f:
        raw = f.read(size)
    whole = len(raw) >= os.path.getsize(path)
    if not whole:  # complete lines only (a line break never sits inside a UTF-8 character)
        cut = max(raw.rfind(b"\n"), raw.rfind(b"\r"))
        raw = raw[: cut + 1] if cut >= 0 else raw
    bom = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(raw[bom:], final=whole)
    except UnicodeDecodeError:
        raise InputError(f"{path}: cannot read the file as UTF-8 text (is it binary?)") from None
    if "\x00" in text:
        raise InputError(f"{path}: cannot read the file as text (it holds NUL bytes)")
    direct = not any(c in text for c in ODD_BREAKS) and (whole or "\n" in text or "\r" in text)
    offset, number = bom, 0
    lines = iter(text.splitlines(keepends=True))
    first = None
    for line in lines:
        number += 1
        if not is_skipped(line):
            first = line
            break
        offset += len(line.encode())
    if first is None and whole:
        raise InputError(f"{path}: the file holds no data")
    if first is None or (not whole and first == first.rstrip("\r\n")):
        return inspect_text(path, delimiter, x_format, 4 * size)  # the header is further on
    body = first.rstrip("\r\n")
    if delimiter is None:
        delimiter = sniff_delimiter(body)
    try:
        fields = split_fields(body, delimiter, number)
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    header = any(f and not is_value(f, x_format) for f in fields)
    names = [f if f else str(i) for i, f in enumerate(fields)] if header else None
    head = Head(path, delimiter, names or [str(i) for i in range(len(fields))], header)
    head.line, head.offset = number, offset
    if header:
        head.line, head.offset = number + 1, offset + len(first.encode())
    else:
        head.rows.append(fields)
    head.direct = direct and len(fields) > 1 and (delimiter is not None or body == " ".join(fields))
    for line in lines:  # the first rows (the rest of the file is checked by read_direct)
        if len(head.rows) >= HEAD_ROWS:
            break
        if not line.rstrip("\r\n"):
            continue  # an empty line: pyarrow skips it too
        if is_skipped(line):
            head.direct = False  # spaces or a comment: only the careful road skips those
            continue
        row = line.rstrip("\r\n")
        try:
            head.rows.append(split_fields(row, delimiter, 0))
        except csv.Error:
            head.direct = False  # the careful road names the line
    if whole and header and not head.rows and head.direct:
        raise InputError(f"{path}: the file has a header but no data rows")
    head.end = len(raw)
    return head


# ---------------------------------------------------------------------------- the direct road
def read_direct(
    head: Head, types: dict[int, str], x_format: str | None = None, complete: int | None = None
) -> tuple[dict[int, np.ndarray], int] | None:
    """Columns of a text file read by pyarrow itself, typed; None where the careful road must
    read the file (a cell pyarrow cannot convert, a row of the wrong width, a missing cell in
    column ``complete`` (x) or of kind ``"time"``/``"int"``, a ``#`` after the header).

    Args:
        head: the file's :class:`Head` (``head.direct`` must be True).
        types: column position -> ``"float"`` (float64, NaN for a missing value), ``"int"``
            (int64), ``"time"`` (int64 nanoseconds since the epoch: ISO-8601 text, or dates of
            ``x_format``).
        x_format: a ``strptime`` format of the dates, for ``"time"``.
        complete: a column that may hold no missing cell: the careful road names the line of
            one, or skips it where the line is blank (a TSV line of tabs).

    Returns:
        ``(columns, rows)``: column position -> 1-D array, and the number of data rows.
    """
    pa, pcsv = arrow()
    if find_any(head.path, max(head.offset - 1, 0), FOREIGN_ROWS[head.delimiter is None]):
        return None
    arrow_type = {"float": pa.float64(), "int": pa.int64(), "time": pa.timestamp("ns")}
    names = [f"c{i}" for i in range(len(head.names))]
    bad: list[int] = []

    def invalid(row: Any) -> str:  # a row of the wrong width: the careful road names it
        bad.append(1)
        return "error"

    read = pcsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES, use_threads=True)
    parse = pcsv.ParseOptions(
        delimiter=head.delimiter or " ",
        quote_char='"' if head.delimiter else False,
        newlines_in_values=False,
        ignore_empty_lines=True,
        invalid_row_handler=invalid,
    )
    convert = pcsv.ConvertOptions(
        include_columns=[names[j] for j in types],
        column_types={names[j]: arrow_type[t] for j, t in types.items()},
        null_values=NULLS,
        strings_can_be_null=True,
        quoted_strings_can_be_null=True,
        timestamp_parsers=[x_format] if x_format else None,
    )
    size = os.path.getsize(head.path)
    check_memory(8 * len(types) * estimate_rows(head, size), f"{head.path}: reading the columns")
    parts: dict[int, list[np.ndarray]] = {j: [] for j in types}
    nulls = dict.fromkeys(types, 0)
    try:
        source = pa.memory_map(head.path)
        source.seek(head.offset)
        with source, pcsv.open_csv(source, read, parse, convert) as reader:
            for batch in reader:
                for k, (j, kind) in enumerate(types.items()):
                    col = batch.column(k)
                    if (kind != "float" or j == complete) and col.null_count:
                        return None  # a missing date or x: the careful road names its line
                    nulls[j] += col.null_count
                    parts[j].append(values(col, np.float64 if kind == "float" else np.int64))
    except pa.ArrowException:
        return None
    cols = {j: np.concatenate(p) if p else np.empty(0) for j, p in parts.items()}
    rows = len(next(iter(cols.values()))) if cols else 0
    if bad or any(n == rows for n in nulls.values()):
        return None  # a column of no values: the careful road tells empty cells from "NA"
    return cols, rows


def values(col: Any, dtype: type) -> np.ndarray:
    """A float64 or int64 (timestamp) pyarrow array as a NumPy view of its buffer, a null as
    NaN (in a copy). pyarrow's own ``to_numpy`` imports pandas for arrays with nulls, which
    costs a fresh process half a second."""
    n, at = len(col), col.offset
    validity, data = col.buffers()[:2]
    out: np.ndarray = np.frombuffer(data, dtype, count=n, offset=at * 8)
    if col.null_count:
        out = out.copy()
        bits = np.unpackbits(np.frombuffer(validity, np.uint8), count=at + n, bitorder="little")
        out[bits[at:] == 0] = np.nan
    return out


def estimate_rows(head: Head, size: int) -> int:
    """The number of data rows a file of ``size`` bytes holds, judged by its head."""
    per_row = max((head.end - head.offset) / max(len(head.rows), 1), 1.0)
    return int((size - head.offset) / per_row * 1.1) + 1024


# What pyarrow would split unlike the careful road, anywhere after the header: a comment
# (a "#" anywhere: memchr is cheaper than finding line starts), and in columns separated by
# spaces a run of spaces, a tab, or a space at either end of a line (pyarrow reads single
# spaces only; a run would be an empty field where str.split() sees none).
FOREIGN_ROWS = {
    False: (b"#",),
    True: (b"#", b"  ", b"\t", b" \n", b"\n ", b" \r", b"\r "),
}


def find_any(path: str, start: int, needles: Sequence[bytes]) -> bool:
    """Whether any of ``needles`` occurs after byte ``start`` of the mapped file."""
    if os.path.getsize(path) <= start:
        return False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return any(m.find(n, start) >= 0 for n in needles)


def cell_texts(head: Head, index: int, rows: Sequence[int]) -> list[str]:
    """The file's own text of column ``index`` in data rows ``rows`` (for messages, after the
    direct road read the column as numbers or dates)."""
    pa, pcsv = arrow()
    names = [f"c{i}" for i in range(len(head.names))]
    read = pcsv.ReadOptions(column_names=names, block_size=BLOCK_BYTES)
    parse = pcsv.ParseOptions(
        delimiter=head.delimiter or " ",
        quote_char='"' if head.delimiter else False,
        ignore_empty_lines=True,
    )
    convert = pcsv.ConvertOptions(
        include_columns=[names[index]], column_types={names[index]: pa.string()}
    )
    source = pa.memory_map(head.path)
    source.seek(head.offset)
    with source:
        col = pcsv.read_csv(source, read, parse, convert).column(0)
    return [str(col[r].as_py()).strip() for r in rows]


def line_locator(head: Head) -> Callable[[int], str]:
    """Data row (0-based) of a file read by the direct road -> ``"line N"``.

    pyarrow numbers no rows when it reads in threads; the rows are the non-empty lines after
    the header (the direct road read no other kind of line), found here, when a message needs
    one, by a vectorised scan of the file's line breaks (``\\n``, ``\\r\\n``, ``\\r``).
    """
    cache: dict[int, int] = {}

    def locate(row: int) -> str:
        if row not in cache:
            cache[row] = nonempty_line(head.path, head.offset, head.line, row)
        return f"line {cache[row]}"

    return locate


def nonempty_line(path: str, offset: int, first: int, row: int, block: int = 1 << 24) -> int:
    """The 1-based line number of the ``row``-th (0-based) non-empty line from byte ``offset``,
    whose line number is ``first``; line breaks are ``\\n``, ``\\r\\n`` and a lone ``\\r``."""
    line, seen, carry, pending_cr = first, 0, 0, False
    with open(path, "rb") as f:
        f.seek(offset)
        while chunk := f.read(block):
            b = np.frombuffer(chunk, np.uint8)
            cr, lf = b == 13, b == 10
            after_cr = np.concatenate([[pending_cr], cr[:-1]])
            breaks = np.flatnonzero(cr | (lf & ~after_cr))  # a \r\n breaks at its \r
            content = np.cumsum(~(cr | lf))  # bytes of text up to every position
            per_line = np.diff(np.concatenate([[0], content[breaks]]))
            if len(breaks):
                per_line[0] += carry
                filled = np.flatnonzero(per_line > 0)
                if seen + len(filled) > row:
                    return int(line + filled[row - seen])
                seen += len(filled)
                line += len(breaks)
                carry = int(content[-1] - content[breaks[-1]])
            else:
                carry += int(content[-1])
            pending_cr = bool(cr[-1])
    return line  # the last line, without a break


# ---------------------------------------------------------------------------- the careful road
def careful_lines(path: str) -> tuple[list[int], list[str]]:
    """The data lines of a text file and their 1-based numbers (blank lines and ``#``
    comments skipped; Python's line breaks, as the head saw them)."""
    # the text, its lines and their fields take several times the file's size in memory
    check_memory(6 * os.path.getsize(path), f"{path}: reading the text file")
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise InputError(f"{path}: cannot read the file as UTF-8 text (is it binary?)") from None
    except OSError as e:
        raise InputError(f"{path}: cannot read the file: {e.strerror}") from None
    if "\x00" in text:
        raise InputError(f"{path}: cannot read the file as text (it holds NUL bytes)")
    every = text.splitlines()
    if "#" not in text and all(map(str.strip, every)):  # no per-line Python loop
        return list(range(1, len(every) + 1)), every
    kept = [(n, line) for n, line in enumerate(every, start=1) if not is_skipped(line)]
    return [n for n, _ in kept], [line for _, line in kept]


def read_careful(
    path: str,
    delimiter: str | None = None,
    x_format: str | None = None,
    keep: Sequence[int] | None = None,
) -> Table:
    """Every line of a text file numbered, its fields split by pyarrow, kept as text.

    Args:
        path: the file.
        delimiter: the fields' delimiter; default: the first of tab, comma, semicolon found in
            the first data line, else runs of spaces.
        x_format: a ``strptime`` format: its dates are data, not a header.
        keep: the column positions to read (default all; the others stay None).

    Returns:
        A :class:`Table` of ``U`` columns (cells stripped) and the line of every row.

    Raises:
        InputError: no data, a header only, a line of another width than the first, a quote
            left open at the end of its line.
    """
    numbers, texts = careful_lines(path)
    if not texts:
        raise InputError(f"{path}: the file holds no data")
    if delimiter is None:
        delimiter = sniff_delimiter(texts[0])
    try:
        first = split_fields(texts[0], delimiter, numbers[0])
    except csv.Error as e:
        raise InputError(f"{path}: cannot parse the file as delimited text: {e}") from None
    header = any(f and not is_value(f, x_format) for f in first)
    width = len(first)
    names = [f if f else str(i) for i, f in enumerate(first)] if header else None
    if header:
        texts, numbers = texts[1:], numbers[1:]
    if not texts:
        raise InputError(f"{path}: the file has a header but no data rows")
    quote: str | bool = '"'
    if delimiter is None:  # runs of spaces: one separator no field holds (split() takes it)
        texts, delimiter, quote = ["\x1f".join(t.split()) for t in texts], "\x1f", False
    like = "header" if header else "first line"
    keep = list(range(width) if keep is None else keep)
    strings = split_text(path, "\n".join(texts), delimiter, quote, width, keep, numbers, like)
    cols: list[np.ndarray | None] = [None] * width
    for j, col in zip(keep, strings, strict=True):
        cells = np.array(col, dtype=str) if col else np.empty(0, str)
        cols[j] = np.char.strip(cells)
        broken = np.flatnonzero(np.char.find(cells, "\n") >= 0)
        if len(broken):  # a quote left open swallowed the lines after it
            raise InputError(
                f"{path}: cannot parse the file as delimited text: line "
                f"{numbers[int(broken[0])]}: a quoted field runs past the end of its line "
                "(an unterminated or misplaced quote?)"
            )
    return Table(path, names or [str(i) for i in range(width)], cols, header, lines=numbers)


def split_text(
    path: str,
    text: str,
    delimiter: str,
    quote: str | bool,
    width: int,
    keep: list[int],
    numbers: list[int],
    like: str,
) -> list[list[str]]:
    """The fields of ``keep`` of every line of ``text``, split by pyarrow (one thread, so its
    rows are numbered); a line of another width is an error naming its line."""
    pa, pcsv = arrow()
    names = [f"c{i}" for i in range(width)]
    bad: list[tuple[int, int]] = []

    def invalid(row: Any) -> str:
        bad.append((row.number, row.actual_columns))
        return "error"

    read = pcsv.ReadOptions(column_names=names, use_threads=False, block_size=BLOCK_BYTES)
    parse = pcsv.ParseOptions(
        delimiter=delimiter,
        quote_char=quote,
        newlines_in_values=True,
        ignore_empty_lines=False,
        invalid_row_handler=invalid,
    )
    convert = pcsv.ConvertOptions(
        include_columns=[names[j] for j in keep],
        column_types={names[j]: pa.string() for j in keep},
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        table = pcsv.read_csv(pa.py_buffer(text.encode()), read, parse, convert)
    except pa.ArrowException as e:
        if bad and bad[0][0] is not None:
            number, got = bad[0]
            raise InputError(
                f"{path}: line {numbers[number - 1]} has {got} field(s), expected {width} like "
                f"the {like}"
            ) from None
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{path}: cannot parse the file as delimited text: {msg}") from None
    return [table.column(k).to_pylist() for k in range(len(keep))]
