"""Writing the command's result tables: CSV/TSV, JSON and Parquet files, and the table on screen.

Every float is written with full precision (``repr``: the shortest text that reads back to the
same float64), always through a temporary file in the same folder renamed into place, so a
failed run never leaves a partial file and a reader never sees one. ``datetime64`` columns are
written as ISO text (CSV, JSON, the table on screen) or timestamps (Parquet).
"""

import contextlib
import csv
import json
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._dates import IsoUnit, iso_strings, iso_unit
from ._files import InputError, suffix


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def check_output_path(
    path: str | os.PathLike, inputs: Sequence[str | os.PathLike], allowed: Sequence[str]
) -> str:
    """Validate an output path before any work is done, so a bad one fails fast.

    Args:
        path: where the output will go.
        inputs: the input files, which are never overwritten.
        allowed: the accepted extensions (lower case, with the dot).

    Returns:
        ``path`` as a string.

    Raises:
        InputError: wrong extension, missing folder, a folder in the way, or an input file.
    """
    path = os.fspath(path)
    ext = suffix(path)
    if ext not in allowed:
        raise InputError(
            f"{path}: unsupported output format {ext or '(no extension)'!r} "
            f"(use {', '.join(allowed)})"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: the output folder {folder} does not exist")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder; give a file name")
    for src in inputs:
        if src is not None and os.path.exists(path) and same_file(path, os.fspath(src)):
            raise InputError(f"{path}: refusing to overwrite the input file; choose another name")
    # Writable, tried for real (permissions, a read-only mount; root ignores the mode bits).
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        raise InputError(
            f"{path}: cannot write to the output folder {folder}: {e.strerror or e}"
        ) from None
    if ext == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(
                f"{path}: writing Parquet needs pyarrow: pip install 'jaxsubset[cli]'"
            ) from None
    return path


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    On any exception the temporary file is removed and ``path`` is left as it was, so no
    partial output is ever visible.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp" + suffix(path), dir=folder)
    except OSError as e:
        raise InputError(f"{path}: cannot write the file: {e.strerror or e}") from None
    os.close(fd)
    try:
        # mkstemp makes the file private (0600); give it the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        yield tmp
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if e.filename not in (None, tmp, path):
            raise
        # Named by the output, not by the temporary file it was being written to.
        raise InputError(f"{path}: cannot write the file: {e.strerror or e}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def format_value(v: object) -> str:
    """One value as text with full precision: ints as ints, floats by ``repr`` (round-trips)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if v is None:
        return ""  # a missing date (NaT), as pandas writes it
    return str(v)


def json_value(v: object) -> object:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON has no NaN or infinity
    return v


def write_table(path: str | os.PathLike, columns: dict[str, np.ndarray]) -> None:
    """Write equal-length columns to ``path`` as CSV, TSV, JSON or Parquet (by extension).

    The file appears complete or not at all (see :func:`atomic_output`). CSV/TSV hold a header
    row and full-precision numbers (NaN as ``nan``); JSON is a list of one object per row with
    NaN as ``null``; Parquet keeps the column dtypes. ``datetime64`` columns are ISO-8601
    text in CSV/TSV (empty for NaT) and JSON (``null`` for NaT), timestamps in Parquet.

    Args:
        path: the output file; its extension picks the format.
        columns: column name -> 1-D array, all of the same length.
    """
    path = os.fspath(path)
    ext = suffix(path)
    names = list(columns)
    arrays = [np.asarray(columns[k]) for k in names]
    n_rows = len(arrays[0]) if arrays else 0

    def as_lists() -> list[list]:  # dates as ISO text (None for NaT), numbers as numbers
        unit = iso_unit(*(a for a in arrays if a.dtype.kind == "M"))
        return [iso_strings(a, unit) if a.dtype.kind == "M" else a.tolist() for a in arrays]

    with atomic_output(path) as tmp:
        if ext in (".csv", ".tsv"):
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                w = csv.writer(f, delimiter="\t" if ext == ".tsv" else ",", lineterminator="\n")
                w.writerow(names)
                lists = as_lists()
                for i in range(n_rows):
                    w.writerow([format_value(c[i]) for c in lists])
        elif ext == ".json":
            lists = as_lists()
            rows = [
                {k: json_value(c[i]) for k, c in zip(names, lists, strict=True)}
                for i in range(n_rows)
            ]
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(rows, f, indent=1, allow_nan=False)
                f.write("\n")
        elif ext == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            table = pa.Table.from_arrays([arrow_column(a) for a in arrays], names=names)
            # no dictionary pages: the table's columns are (nearly) all distinct values, for
            # which pyarrow builds a dictionary and drops it (BENCHMARKS.md: half the time)
            pq.write_table(table, tmp, use_dictionary=False)
        else:  # pragma: no cover - check_output_path rejects these first
            raise InputError(f"{path}: unsupported output format {ext!r}")


def arrow_column(a: np.ndarray) -> Any:
    """A column as a pyarrow array on its NumPy buffer: numbers keep their dtype (NaN stays
    NaN), dates are ``timestamp[ns]`` with NaT as null. Built from the buffers because
    ``pyarrow.array`` imports pandas (half a second of a fresh process)."""
    import pyarrow as pa

    if a.dtype.kind not in "biufM":  # pragma: no cover - the command writes numbers and dates
        return pa.array(a)
    validity, nulls = None, 0
    if a.dtype.kind == "M":
        nat = np.isnat(a)
        nulls = int(nat.sum())
        validity = pa.py_buffer(np.packbits(~nat, bitorder="little")) if nulls else None
        a, kind = a.astype("datetime64[ns]").view(np.int64), pa.timestamp("ns")
    else:
        a = a.astype(np.int64) if a.dtype.kind == "b" else a
        kind = pa.from_numpy_dtype(a.dtype)
    data = pa.py_buffer(np.ascontiguousarray(a))
    return pa.Array.from_buffers(kind, len(a), [validity, data], null_count=nulls)


def fmt(v: Any) -> str:
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


def _cells(values: Any, unit: IsoUnit) -> list[str]:
    a = np.asarray(values)
    if a.dtype.kind == "M":  # a time axis: ISO dates, NaT where a subset is empty
        return ["NaT" if t is None else t for t in iso_strings(a, unit)]
    return [fmt(v) for v in a.tolist()]


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
