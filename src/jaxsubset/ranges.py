"""Index ranges ``(start, count)`` for every kind of subset, without gathering any data.

Each function mirrors the constructor of the same name in :mod:`jaxsubset` but takes only ``x``
and returns a :class:`jaxsubset.Ranges`: the O(N) statistics consume ranges directly, and
:func:`jaxsubset.gather` turns them into padded :class:`jaxsubset.Subsets`.
"""

from .resolve import (
    bin_ranges as bins,
    chunk_ranges as chunks,
    dynamic_ranges as dynamic,
    isolate_ranges as isolate,
    rolling_ranges as rolling,
    select_ranges as select,
    sliding_ranges as sliding,
)


__all__ = ["bins", "chunks", "dynamic", "isolate", "rolling", "select", "sliding"]
