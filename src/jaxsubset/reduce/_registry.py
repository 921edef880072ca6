"""The statistics registry: names, conventions, roads, and the road tables.

Every statistic the library computes over many subsets (``range_statistic``,
``rolling_statistic``, ``binned_statistic``, the command) is computed by a *road*. Each
statistic has a **reference** road (the padded, masked reduction of :class:`jaxsubset.Subsets`:
the ground truth) and at most one fast road per backend family. ``jaxsubset.reduce.choose``
is the only place a road is chosen; ``method=`` on the public functions forces one.

Conventions every road follows (the reference defines them; tests check every road against
it and against NumPy/SciPy/pandas):

- ``y`` is ``(N, C)``; results are ``(K, C)``: float in the input's float dtype (the default
  float for integer or bool ``y``), ``"count"`` an int in the index dtype.
- ``omit=False`` (NumPy's rule): a subset holding a NaN gives NaN; ``"count"`` counts every
  point. ``omit=True``: NaN readings are left out per channel; ``"count"`` counts the others.
- An empty subset (no counted point) gives NaN, except ``"sum"`` (0) and ``"count"`` (0).
- ``"var"``/``"std"`` divide by ``n - ddof`` (``ddof`` defaults to 0 everywhere, as NumPy and
  SciPy) and give NaN where ``n - ddof <= 0``; a constant or one-point subset gives exactly 0;
  a subset holding an infinite value gives NaN (``inf - inf``, as NumPy).
- ``"sem"`` is ``std / sqrt(n)`` with the same ``ddof`` (the library's default 0; pandas'
  ``sem()`` and SciPy's ``stats.sem`` default to ``ddof=1``: pass it for their numbers).
- ``"first"``/``"last"``: with ``omit`` the first/last non-NaN reading of the subset (pandas'
  groupby ``first()``/``last()``); without, the first/last point, NaN if that point is NaN
  (pandas' ``skipna=False``). An empty subset gives NaN.
- ``"skew"``/``"kurt"``: pandas' bias-corrected sample skewness ``G1`` and excess kurtosis
  ``G2`` (``scipy.stats.skew/kurtosis(bias=False)``), NaN below 3/4 points, for a constant
  subset (as pandas 3), with an inf held, or where the moments overflow (``_moments``).
- ``"median"`` is the mean of the two middle values (NaN with a NaN held, unless omitted).
- ``"quantile"`` takes ``q=`` (a static float in ``[0, 1]``) on the public functions, as
  ``numpy.quantile``/pandas' ``quantile(q)`` (linear interpolation); inside the dispatcher it
  is the name ``quantile_key(q)`` (``"quantile(0.9)"``), so q travels with the static names.
- ``"cov"``/``"corr"`` (:data:`PAIR_STATISTICS`) are between channels: ``y`` must be
  ``(N, C)`` and a subset's result is the ``(C, C)`` matrix (results ``(K, C, C)``), entry
  ``[i, j]`` made of the points where both channels ``i`` and ``j`` count: with ``omit``
  the pairwise-complete points (pandas' ``rolling().cov(other)`` and ``DataFrame.cov()``),
  without it every point (a NaN in either channel makes the entry NaN, as ``numpy.cov``).
  ``"cov"`` divides the co-moment by ``n - ddof`` (the same ``ddof`` as ``"var"``, default
  0: ``numpy.cov`` and pandas use 1), NaN where ``n - ddof <= 0``, exactly 0 for a constant
  channel; ``"corr"`` is Pearson's r (no ``ddof``: it cancels), clipped to ``[-1, 1]`` as
  ``numpy.corrcoef``, exactly 1 on the diagonal, NaN below 2 points and where either
  channel is constant; an infinite value makes its entries NaN.
- A result depends only on the points of its subset (no value outside it can change it), and
  a finite result never gets a NaN gradient from elsewhere.
"""

import dataclasses
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from .. import _native
from .._base import PAIR_STATISTICS as PAIR_STATISTICS, STATISTICS as STATISTICS
from .._core import backend as backend
from ._finish import extreme_statistic, mean_statistic, spread_statistics, sum_statistic
from ._folds import Extreme, Fold, Moments, Moments4, Pairs, Sum
from ._moments import shape_statistic
from ._pairs import PAIR_COUNT as PAIR_COUNT, pair_statistics


# STATISTICS (the names, with their docstring) lives in ``jaxsubset._base._names``, a module without
# JAX: the command checks ``--stat`` before it imports jax
ALL_STATISTICS = STATISTICS + PAIR_STATISTICS
DEFAULT_DDOF = 0


@dataclasses.dataclass(frozen=True)
class Entry:
    """One statistic of the table: what every road takes to compute it, so a formula exists once.

    Attributes:
        name: the registry name (``"quantile"`` for every ``"quantile(<q>)"``).
        partials: what a road reduces each subset to before the finish: ``n`` (the points
            counted), ``total`` (their sum), ``extreme``, ``M2``/``M3``/``M4`` (central
            moments about the subset's mean, with ``n`` and the mean: :func:`.chan`),
            ``pairs`` (channel-pair co-moments, :mod:`._pairs`), ``index`` (the point read),
            ``ranks`` (the values of the middle ranks).
        fold: how two subsets' partials combine and their identity (:mod:`._folds`); None for
            the statistics that are read or selected, never combined (first/last, the order
            statistics).
        finish: the statistic from its reduced partials with the conventions below
            (:mod:`._finish`, :mod:`._moments`, :mod:`._pairs`); None where the reduced
            partial is the statistic (the count) or the road selects it (first/last: a read at
            an index; median/quantile: :mod:`._median`'s ranks and ``lerp``).
        empty: the value of a subset with no counted point.
        pair: the result of a subset is the ``(C, C)`` matrix between channels.
        integer: the result is an integer count (never cast to the float dtype).
    """

    name: str
    partials: tuple[str, ...]
    fold: Fold | None = None
    finish: Callable[..., Any] | None = None
    empty: float = float("nan")
    pair: bool = False
    integer: bool = False


# the folds are stateless: one instance each, shared by every road
SUM, MIN, MAX = Sum(), Extreme("min"), Extreme("max")
MOMENTS, MOMENTS4, PAIRS = Moments(), Moments4(), Pairs()
TABLE: dict[str, Entry] = {
    e.name: e
    for e in (
        Entry("count", ("n",), SUM, None, 0.0, integer=True),
        Entry("sum", ("n", "total"), SUM, sum_statistic, 0.0),
        Entry("mean", ("n", "total"), SUM, mean_statistic),
        Entry("var", ("n", "M2"), MOMENTS, spread_statistics),
        Entry("std", ("n", "M2"), MOMENTS, spread_statistics),
        Entry("sem", ("n", "M2"), MOMENTS, spread_statistics),
        Entry("min", ("n", "extreme"), MIN, extreme_statistic),
        Entry("max", ("n", "extreme"), MAX, extreme_statistic),
        Entry("first", ("index",)),
        Entry("last", ("index",)),
        Entry("skew", ("n", "M2", "M3", "M4"), MOMENTS4, shape_statistic),
        Entry("kurt", ("n", "M2", "M3", "M4"), MOMENTS4, shape_statistic),
        Entry("median", ("ranks",)),
        Entry("quantile", ("ranks",)),
        Entry("cov", ("pairs",), PAIRS, pair_statistics, pair=True),
        Entry("corr", ("pairs",), PAIRS, pair_statistics, pair=True),
    )
}


def entry(statistic: str) -> Entry:
    """The table's entry of a statistic (a dispatcher name: ``"quantile(0.9)"`` too)."""
    return TABLE[base_name(statistic)]


def fold_of(statistic: str) -> Fold:
    """The fold a road combines ``statistic``'s partials with (a folded statistic only)."""
    fold = entry(statistic).fold
    if fold is None:
        raise ValueError(f"statistic {statistic!r} is not folded")
    return fold


# roads over contiguous index ranges (sorted x) and over bin labels (unsorted x)
RANGE_ROADS = {
    "reference": ALL_STATISTICS,
    # every statistic a fold of partials computes: all but the order statistics
    "tree": tuple(s for s in ALL_STATISTICS if s not in ("median", "quantile")),
    # the order statistics of ranges of at most ``capacity`` points: a wavelet tree of the
    # ranks in overlapping rows, O(log capacity) per range (``_wavelet``); and their counts
    "wavelet": ("count", "median", "quantile"),
    # the C++ kernels of ``jaxsubset._native`` (CPU only; the pure-JAX roads elsewhere): every
    # per-channel statistic, O(N) windows and O(N log w) rolling order statistics
    "native": _native.STATISTICS,
}
# roads that need a static ``capacity`` (a bound on the points of a range)
CAPACITY_ROADS = ("reference", "wavelet")
# trailing windows of a fixed number of points (``rolling_statistic(..., window=w)``): the
# block road (van Herk / Gil-Werman prefix and suffix folds, O(N)) or any range road over the
# equivalent ranges
SLIDING_ROADS = {
    "blocks": ("count", "sum", "mean", "var", "std", "sem", "min", "max", "cov", "corr"),
    **RANGE_ROADS,
}
LABEL_ROADS = {
    "reference": ALL_STATISTICS,
    "scatter": ("count", "sum", "mean", "var", "std", "sem", "min", "max", "median"),
    # the median and quantiles by one sort of (label, value) pairs, the rest as ranges
    "sort": ALL_STATISTICS,
    # the C++ kernel of ``jaxsubset._native`` (CPU only): one pass by label, bins of x
    # resolved in the kernel (``_native.native_bins``)
    "native": _native.STATISTICS,
}
# bins of sorted x by whole blocks (``_blocks``, every backend): these statistics
BLOCK_BIN_STATISTICS = ("count", "sum", "mean", "var", "std", "sem", "min", "max")
# points per block: about sqrt(N / bins) (N / B block partials and about B points per cut
# block to scatter), a power of two within these bounds; bins of fewer than
# BLOCK_MIN_POINTS points on average take the label roads (the scatters per point cost less)
BLOCK_SIZES = (8, 4096)
BLOCK_MIN_POINTS = 32
ORDER = ("median", "quantile")  # the order statistics (never folded)
METHODS = ("auto", "reference", "tree", "wavelet", "blocks", "scatter", "sort", "native")


def quantile_key(q: Any, func: str) -> str:
    """The dispatcher's name of the ``q``-quantile: ``"quantile(<q>)"``, q checked static."""
    if isinstance(q, bool) or not isinstance(q, int | float | np.floating | np.integer):
        raise TypeError(f"{func}: `q` must be a static float in [0, 1], got {q!r}")
    if not 0.0 <= float(q) <= 1.0:
        raise ValueError(f"{func}: `q` must be in [0, 1], got {q!r}")
    return f"quantile({float(q)!r})"


def base_name(statistic: str) -> str:
    """The registry name of a dispatcher name (``"quantile(0.9)"`` -> ``"quantile"``)."""
    return "quantile" if statistic.startswith("quantile(") else statistic


def quantile_q(statistic: str) -> float:
    """``q`` of a dispatcher quantile name."""
    return float(statistic[len("quantile(") : -1])


def with_quantile(stats: tuple[str, ...], q: Any, func: str) -> tuple[str, ...]:
    """``stats`` with ``"quantile"`` replaced by its dispatcher name; ``q`` needs it."""
    if "quantile" not in stats:
        if q is not None:
            raise ValueError(f"{func}: `q` is given but statistic 'quantile' is not asked for")
        return stats
    if q is None:
        raise TypeError(f"{func}: statistic 'quantile' needs `q=` (a float in [0, 1])")
    key = quantile_key(q, func)
    return tuple(key if s == "quantile" else s for s in stats)


def result_shape(statistic: str, batch: tuple[int, ...], ch: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of ``statistic`` over subsets of batch shape ``batch`` of ``(N, *ch)`` data
    (the table's ``pair``: a ``(C, C)`` matrix per subset)."""
    e = TABLE.get(base_name(statistic))
    return batch + ch + ch if e is not None and e.pair else batch + ch


def is_count(key: str) -> bool:
    """Whether a result key holds integer counts (never cast to the float dtype): the
    table's ``integer`` statistics and :data:`PAIR_COUNT`."""
    return key == PAIR_COUNT or (key in TABLE and TABLE[key].integer)


def check_pairs(stats: tuple[str, ...], y_shape: tuple[int, ...], func: str, name: str = "y"):
    """``"cov"``/``"corr"`` pair channels: ``y`` must be ``(N, C)`` (one channel axis)."""
    pair = [s for s in stats if s in PAIR_STATISTICS]
    if pair and len(y_shape) != 2:
        want = "(C, N) (channels leading, as SciPy)" if name == "values" else "(N, C)"
        raise ValueError(
            f"{func}: statistic {pair[0]!r} is between channels and needs `{name}` of shape "
            f"{want}, got shape {tuple(y_shape)}; each subset's result is the (C, C) matrix"
        )


def float_dtype(dtype: Any) -> Any:
    """The float dtype results come in: ``dtype`` if inexact, else the default float."""
    if jnp.issubdtype(dtype, jnp.inexact):
        return dtype
    return jnp.result_type(float)


def check_statistics(
    statistic: Any, func: str, allowed: tuple[str, ...] = ALL_STATISTICS
) -> tuple[tuple[str, ...], bool]:
    """``(names, single)`` for a ``statistic`` argument: one name or a non-empty tuple/list."""
    single = isinstance(statistic, str)
    names = (statistic,) if single else statistic
    if not isinstance(names, tuple | list) or not names:
        raise TypeError(
            f"{func}: `statistic` must be a name or a non-empty tuple/list of names, "
            f"got {statistic!r}"
        )
    for s in names:
        if s not in allowed:
            raise ValueError(
                f"{func}: `statistic` must be one of {', '.join(map(repr, allowed))}, got {s!r}"
            )
    return tuple(names), single


def check_method(method: Any, func: str, roads: dict[str, tuple[str, ...]]) -> str:
    """Validate ``method=``: ``"auto"`` or the name of one of ``roads``."""
    choices = ("auto", *roads)
    if method not in choices:
        raise ValueError(
            f"{func}: `method` must be one of {', '.join(map(repr, choices))}, got {method!r}"
        )
    return method


def block_size(num: int, nbins: int, force: bool = False) -> int | None:
    """Points per block for ``num`` sorted points in ``nbins`` bins (``_blocks``), or None
    where the bins hold fewer than :data:`BLOCK_MIN_POINTS` points each on average (unless
    ``force``)."""
    if num < 1 or (not force and num < BLOCK_MIN_POINTS * (nbins + 1)):
        return None
    b = 1 << max(int(round(np.log2(max(num / (nbins + 1), 1.0)) / 2)), 0)
    return int(min(max(b, BLOCK_SIZES[0]), BLOCK_SIZES[1]))


def native_first(statistic: str) -> bool:
    """Whether ``"auto"`` takes the native road for ``statistic`` (of ranges or windows).

    On the CPU where the kernels are available (``jaxsubset._native.usable``: built, safe
    for the running jaxlib, not switched off by ``JAXSUBSET_NATIVE=off``), for the
    statistics they compute.
    """
    return base_name(statistic) in RANGE_ROADS["native"] and _native.usable()


def needs_capacity(road: str, statistic: str) -> bool:
    """Whether ``road`` needs a static ``capacity`` (a bound on the points of a range) for
    ``statistic``: the padded roads always; the native road for the order statistics (its
    pure-JAX branch and derivative are the wavelet road's)."""
    return road in CAPACITY_ROADS or (road == "native" and base_name(statistic) in ORDER)
