"""Reading the command's binary inputs: ``.npy`` (memory-mapped), ``.npz`` and Parquet.

The file's first bytes decide its kind (:func:`sniff`); compressed files, pickles and other
formats the reader does not read are named in the message. Every problem is an
:class:`InputError` of one line naming the file. ``.npz`` members and Parquet columns are
loaded only when asked for (``keep``), so a misspelled column of a big file is reported before
any data is read.
"""

import contextlib
import math
import os
import warnings
import zipfile
from collections.abc import Iterator, Sequence

import numpy as np

from ._files import InputError, check_memory
from ._table import Table


# The first bytes of every binary format the reader knows (the file's content decides its kind;
# the extension only has to be one of INPUT_SUFFIXES).
MAGIC = (
    (b"\x93NUMPY", "npy"),
    (b"PK\x03\x04", "npz"),
    (b"PK\x05\x06", "npz"),  # an empty zip archive
    (b"PAR1", "parquet"),
)
FOREIGN = (  # binary formats the reader does not read, named in the message
    (b"\x1f\x8b", "a gzip-compressed file; decompress it first"),
    (b"BZh", "a bzip2-compressed file; decompress it first"),
    (b"\xfd7zXZ\x00", "an xz-compressed file; decompress it first"),
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file; decompress it first"),
    (b"\x80", "a Python pickle, which is never loaded for safety"),
    (b"\x89HDF", "an HDF5 file (not supported)"),
    (b"\x89PNG", "a PNG image, not data"),
    (b"\xd0\xcf\x11\xe0", "an old Excel/Office file (not supported)"),
)
KIND_NAMES = {"npy": "a NumPy .npy array", "npz": "a NumPy .npz archive", "parquet": "Parquet"}


def sniff(path: str) -> str | None:
    """The kind of file ``path`` holds by its first bytes: ``"npy"``, ``"npz"``, ``"parquet"``,
    or None for anything else (text, or not a known format).

    Raises:
        InputError: the file cannot be opened, or holds a known format the reader refuses.
    """
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise InputError(f"{path}: cannot read the file: {e.strerror or e}") from None
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    for magic, what in FOREIGN:
        if head.startswith(magic):
            raise InputError(f"{path}: the file is {what}")
    return None


# A damaged zip archive fails in zipfile and NumPy in many ways: BadZipFile (a bad CRC, a
# truncated member), OSError, EOFError, zlib.error, struct.error, IndexError, KeyError,
# UnicodeDecodeError, RuntimeError (an encrypted member), NotImplementedError (an unknown
# compression method)... all of them mean the same to the user.
NPZ_ERRORS = (Exception,)


@contextlib.contextmanager
def quiet_numpy() -> Iterator[None]:
    """NumPy's reader warns about headers it had to repair (files "created on Python 2"):
    the file is read or refused as a whole, never with a warning beside the one line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        yield


def npy_header(f, what: str) -> tuple[tuple[int, ...], np.dtype, bool]:
    """Shape, dtype and Fortran order from the header of the ``.npy`` data open in ``f``.

    Raises:
        InputError: a header that is not a ``.npy`` header, or a dtype holding Python objects.
    """
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        with quiet_numpy():
            if version == (1, 0):
                shape, fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]}")
    except Exception as e:  # NumPy's header parser: ValueError, SyntaxError, TokenError...
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{what}: not a valid .npy header: {msg}") from None
    if dtype.hasobject:
        raise InputError(f"{what}: it holds Python objects, which are not loaded for safety")
    return tuple(int(n) for n in shape), dtype, fortran


def check_npy_size(shape, dtype: np.dtype, have: int, what: str) -> int:
    """The bytes of data a ``.npy`` header promises, checked against the ``have`` bytes there."""
    need = math.prod(shape) * dtype.itemsize
    if need > have:
        raise InputError(
            f"{what}: truncated: the header promises a {dtype} array of shape {shape} "
            f"({need} bytes of data), but only {have} bytes follow"
        )
    return need


def read_npy(path: str, mmap: bool = False) -> Table:
    what = f"{path}: cannot read the file as a NumPy .npy array"
    with open(path, "rb") as f:
        shape, dtype, _ = npy_header(f, what)
        offset = f.tell()
    need = check_npy_size(shape, dtype, os.path.getsize(path) - offset, what)
    if not mmap:
        check_memory(need, f"{path}: reading the {dtype} array of shape {shape}")
    try:
        with quiet_numpy():
            a = np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except Exception as e:  # a damaged file, whatever NumPy makes of it
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"{what}: {msg}") from None
    if not isinstance(a, np.ndarray):  # np.load's answer to a zip archive
        raise InputError(f"{path}: the file is not a .npy array")
    if a.dtype.names:  # structured array: one column per field
        names = list(a.dtype.names)
        return Table(path, names, [np.asarray(a[n]).reshape(-1) for n in names], header=True)
    if a.ndim == 1:
        return Table(path, ["0"], [a])
    if a.ndim != 2:
        raise InputError(
            f"{path}: expected a 1-D array, a 2-column (N, 2) array or a pair (2, N), "
            f"got shape {a.shape}"
        )
    if a.shape[0] == 2 and a.shape[1] != 2:  # a pair of rows: x then y
        a = a.T
    return Table(path, [str(j) for j in range(a.shape[1])], [a[:, j] for j in range(a.shape[1])])


def read_npz(path: str, keep: Sequence[int] | None = None) -> Table:
    """An ``.npz`` archive: every member checked (a ``.npy`` header, its size) before any is
    loaded; the members ``keep`` (positions; default all) are loaded, after their total size
    is compared with the free memory, and the others stay None."""
    what = f"{path}: cannot read the file as a NumPy .npz archive"
    try:
        zf = zipfile.ZipFile(path)
    except NPZ_ERRORS as e:
        raise InputError(f"{what}: {e or type(e).__name__}") from None
    names: list[str] = []
    cols: list[np.ndarray | None] = []
    dtypes: list[np.dtype] = []
    with zf:
        try:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            wanted = range(len(infos)) if keep is None else keep
            total = 0
            for k, info in enumerate(infos):
                if not info.filename.endswith(".npy"):
                    raise InputError(f"{what}: member {info.filename!r} is not a .npy array")
                with zf.open(info) as f:
                    shape, dtype, _ = npy_header(f, f"{what}: member {info.filename!r}")
                    have = info.file_size - f.tell()
                need = check_npy_size(shape, dtype, have, f"{what}: member {info.filename!r}")
                total += need if k in wanted else 0
                names.append(info.filename[: -len(".npy")])
                cols.append(None)
                dtypes.append(dtype)
            check_memory(total, f"{path}: reading the arrays of the archive")
            for k in wanted:
                with zf.open(infos[k]) as f, quiet_numpy():
                    cols[k] = np.lib.format.read_array(f, allow_pickle=False)
        except InputError:
            raise
        except NPZ_ERRORS as e:
            raise InputError(f"{what}: {e or type(e).__name__}") from None
    for name, c in zip(names, cols, strict=True):
        if c is not None and c.ndim != 1:
            raise InputError(f"{path}: array {name!r} must be 1-D, got shape {c.shape}")
    return Table(path, names, cols, header=True, dtypes=dtypes)


def read_parquet(path: str, keep: Sequence[int] | None = None) -> Table:
    """A Parquet file: the schema first, then the columns ``keep`` (positions; default all),
    the others None."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{path}: reading Parquet needs pyarrow: {PYARROW_HINT}") from None
    try:
        pf = pq.ParquetFile(path)
        names = list(pf.schema_arrow.names)
        dtypes = [arrow_dtype(f.type) for f in pf.schema_arrow]
        wanted = list(range(len(names)) if keep is None else keep)
        meta = pf.metadata
        # the row groups' whole size (a column chunk's metadata can abort pyarrow on a
        # damaged file; the row group's total is what the fuzz test has run on)
        need = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        need = need * len(wanted) // max(len(names), 1)
    except Exception as e:  # pyarrow raises its own ArrowInvalid/OSError family
        raise InputError(f"{path}: cannot read the file as Parquet: {first_line(e)}") from None
    check_memory(need, f"{path}: reading the Parquet columns")
    cols: list[np.ndarray | None] = [None] * len(names)
    try:
        t = pq.read_table(path, columns=[names[j] for j in wanted]) if wanted else None
    except Exception as e:  # pyarrow raises its own ArrowInvalid/OSError family
        raise InputError(f"{path}: cannot read the file as Parquet: {first_line(e)}") from None
    for k, j in enumerate(wanted):
        assert t is not None
        col = t.column(k)
        try:
            cols[j] = col.to_numpy(zero_copy_only=False)
        except Exception:  # nested or otherwise unconvertible column: keep as objects
            cols[j] = np.asarray(col.to_pylist(), dtype=object)
    return Table(path, names, cols, header=True, dtypes=dtypes)


def arrow_dtype(t: object) -> np.dtype:
    """The NumPy dtype of a pyarrow type (object where it has none)."""
    try:
        return np.dtype(t.to_pandas_dtype())  # type: ignore[attr-defined]
    except Exception:  # nested types, extension types: no NumPy dtype
        return np.dtype(object)


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none)."""
    return str(e).splitlines()[0] if str(e) else type(e).__name__


#: how to get pyarrow, which reads the command's text and Parquet files
PYARROW_HINT = "pip install 'jaxsubset[cli]'"
