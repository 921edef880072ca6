"""What the command's reader and writer share: the user's error, file suffixes, free memory."""

import contextlib
import os


TEXT_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".dat", "")
INPUT_SUFFIXES = TEXT_SUFFIXES + (".npy", ".npz", ".parquet", ".pq")
OUTPUT_SUFFIXES = (".csv", ".tsv", ".json", ".parquet")


class InputError(ValueError):
    """A problem with the user's files or options; its message is one line for the user."""


def suffix(path: str | os.PathLike) -> str:
    """The lower-case file extension of ``path`` (``""`` when none)."""
    return os.path.splitext(os.fspath(path))[1].lower()


def available_memory() -> int:
    """Bytes of memory this process may still allocate (MemAvailable; 2**62 when unknown)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return 1 << 62


def gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB"


def check_memory(need: float, what: str) -> None:
    """Raise an :class:`InputError` when ``need`` bytes for ``what`` exceed the free memory."""
    have = available_memory()
    if need > have:
        raise InputError(
            f"{what} needs about {gib(need)} of memory, more than the {gib(have)} available"
        )
