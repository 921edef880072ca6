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


# The public names are imported on first use (PEP 562 module ``__getattr__``): ``import
# jaxsubset`` does not import jax, so the command can check its options and a file's header
# first. ``__all__``, ``dir()``, ``help()`` and ``from jaxsubset import *`` see every name, and
# type checkers and IDEs read the imports below.
if _TYPE_CHECKING:
    from . import ranges as ranges
    from ._base import STATISTICS as STATISTICS, parse_period as parse_period
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
    from ._core import (
        bin_edges as bin_edges,
        checked as checked,
        to_datetime64 as to_datetime64,
        to_ns as to_ns,
    )
    from ._ewm import ewm_statistic as ewm_statistic
    from ._grow import auto_capacity as auto_capacity, grow_capacity as grow_capacity
    from ._pack import pack as pack
    from ._plot import plot_subsets as plot_subsets
    from ._rolling_stats import rolling_statistic as rolling_statistic
    from ._stats import range_statistic as range_statistic
    from ._streaming.driver import stream as stream
    from ._streaming.shard import shard as shard
    from ._subsets import Subsets as Subsets
    from ._window_stats import window_statistic as window_statistic
    from .reduce import explain as explain
    from .resolve import (
        Ranges as Ranges,
        bins as bins,
        chunks as chunks,
        dynamic as dynamic,
        dynamic_bounds as dynamic_bounds,
        from_ranges as from_ranges,
        gather as gather,
        isolate as isolate,
        nearest as nearest,
        rolling as rolling,
        select as select,
        sliding as sliding,
    )

# public name -> the module that defines it ("" for a submodule of its own name); STATISTICS
# and parse_period come from modules without JAX (the command's checks use them)
_LAZY = {
    "ranges": "",
    **dict.fromkeys(("bin_edges", "to_datetime64", "to_ns"), "._core"),
    **dict.fromkeys(("BinnedStatisticResult", "binned_statistic"), "._binned"),
    "enable_compilation_cache": "._cache",
    **dict.fromkeys(("check_overflow", "check_sorted", "required_capacity"), "._capacity"),
    "checked": "._core",
    **dict.fromkeys(("dynamic", "dynamic_bounds"), ".resolve"),
    "ewm_statistic": "._ewm",
    **dict.fromkeys(("auto_capacity", "grow_capacity"), "._grow"),
    "STATISTICS": "._base",
    "pack": "._pack",
    "parse_period": "._base",
    "plot_subsets": "._plot",
    "rolling_statistic": "._rolling_stats",
    "range_statistic": "._stats",
    "stream": "._streaming.driver",
    "shard": "._streaming.shard",
    "Subsets": "._subsets",
    "window_statistic": "._window_stats",
    "explain": ".reduce",
    **dict.fromkeys(
        (
            "Ranges",
            "bins",
            "chunks",
            "from_ranges",
            "gather",
            "isolate",
            "nearest",
            "rolling",
            "select",
            "sliding",
        ),
        ".resolve",
    ),
}


def __getattr__(name: str) -> _Any:
    """A public name, imported (once) when first asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    if module:
        value = getattr(importlib.import_module(module, __name__), name)
    else:  # a submodule: importing it binds it here
        value = importlib.import_module(f".{name}", __name__)
    globals()[name] = value
    return value


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
