"""jaxsubset: jit-, vmap- and grad-safe subsets of large 1-D ``(x, y)`` datasets in JAX.

Every subset (index range, x-range, chunk, sliding, x-width or hopping window, bin, segment) is
a contiguous index range ``(start, count)`` of sorted ``x``; one gather turns the ranges and a
static capacity into a padded ``Subsets`` pytree with a validity mask and overflow flags.

Subsets (padded, with ``mask``, ``count``, ``overflow`` and reductions):
    isolate        ``y[start:stop]`` with traced bounds (Python slicing, never shifted)
    select         the points with ``lo <= x < hi`` (``closed=`` for the other sides)
    nearest        index of the sample nearest to a value (the ``isclose`` idiom, exact)
    chunks         equal pieces, as ``numpy.array_split``
    sliding        windows of a fixed number of points, every ``step`` points
    rolling        x-width windows at every point, as pandas' offset windows
    dynamic        hopping/tumbling windows, as polars' ``group_by_dynamic``
    bins           ``numpy.histogram`` bins (edges, or calendar periods on dates)
    from_ranges    explicit ``[start, start + count)`` segments
    gather         ``Ranges`` into ``Subsets``
    Subsets        the pytree: ``mean``, ``std``, ``median``, ``argmax``, ``apply``, ...
    Ranges         index ranges ``(start, count)``; ``jaxsubset.ranges`` computes them

Statistics over many subsets, without padded copies:
    range_statistic, rolling_statistic (x-width windows), window_statistic (fixed-count
    windows), binned_statistic (BinnedStatisticResult), ewm_statistic; ``explain`` reports
    which road computes each statistic and why; ``STATISTICS`` names every statistic they
    compute (with the same conventions in ``stream``, ``shard`` and the command;
    ``"quantile"`` takes ``q=``).

Capacity and checks:
    required_capacity, grow_capacity, auto_capacity, check_overflow, check_sorted, checked

Time axes:
    to_ns, to_datetime64, bin_edges, parse_period, dynamic_bounds

Larger than memory, devices, batches, figures, compiling once:
    stream, shard, pack, plot_subsets, enable_compilation_cache

Everything else in this package is private. The documentation (``docs/`` in the source tree:
a quick answer, a user guide and an API reference generated from these docstrings) has the
details; the statistics' conventions are in its page "Statistics and their conventions".
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError, version as _version
from typing import TYPE_CHECKING as _TYPE_CHECKING, Any as _Any

from . import ranges as ranges
from ._axis import (
    bin_edges as bin_edges,
    parse_period as parse_period,
    to_datetime64 as to_datetime64,
    to_ns as to_ns,
)
from ._binned import (
    BinnedStatisticResult as BinnedStatisticResult,
    binned_statistic as binned_statistic,
)
from ._cache import enable_compilation_cache as enable_compilation_cache
from ._capacity import (
    check_overflow as check_overflow,
    check_sorted as check_sorted,
    required_capacity as required_capacity,
)
from ._checks import checked as checked
from ._dynamic import dynamic as dynamic, dynamic_bounds as dynamic_bounds
from ._ewm import ewm_statistic as ewm_statistic
from ._grow import auto_capacity as auto_capacity, grow_capacity as grow_capacity
from ._pack import pack as pack
from ._plot import plot_subsets as plot_subsets
from ._rolling_stats import rolling_statistic as rolling_statistic
from ._statistics._registry import STATISTICS as STATISTICS
from ._stats import range_statistic as range_statistic
from ._subsets import Subsets as Subsets
from ._window_stats import window_statistic as window_statistic
from .reduce import explain as explain
from .resolve import (
    Ranges as Ranges,
    bins as bins,
    chunks as chunks,
    from_ranges as from_ranges,
    gather as gather,
    isolate as isolate,
    nearest as nearest,
    rolling as rolling,
    select as select,
    sliding as sliding,
)


if _TYPE_CHECKING:  # imported on first use (module __getattr__): a first statistic needs neither
    from ._streaming.driver import stream as stream
    from ._streaming.shard import shard as shard

_LAZY = {"stream": "._streaming.driver", "shard": "._streaming.shard"}


def __getattr__(name: str) -> _Any:
    """``stream`` and ``shard``, imported (once) when first asked for."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


try:
    __version__ = _version("jaxsubset")
except _PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

__all__ = [
    "BinnedStatisticResult",
    "Ranges",
    "STATISTICS",
    "Subsets",
    "auto_capacity",
    "bin_edges",
    "binned_statistic",
    "bins",
    "check_overflow",
    "check_sorted",
    "checked",
    "chunks",
    "dynamic",
    "dynamic_bounds",
    "enable_compilation_cache",
    "ewm_statistic",
    "explain",
    "from_ranges",
    "gather",
    "grow_capacity",
    "isolate",
    "nearest",
    "pack",
    "parse_period",
    "plot_subsets",
    "range_statistic",
    "ranges",
    "required_capacity",
    "rolling",
    "rolling_statistic",
    "select",
    "shard",
    "sliding",
    "stream",
    "to_datetime64",
    "to_ns",
    "window_statistic",
]
