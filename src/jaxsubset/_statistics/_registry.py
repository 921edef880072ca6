"""The statistics registry: names, conventions, roads, and the ONE function choosing a road.

Every statistic the library computes over many subsets (``range_statistic``,
``rolling_statistic``, ``binned_statistic``, the command) is computed by a *road*. Each
statistic has a **reference** road (the padded, masked reduction of :class:`jaxsubset.Subsets`:
the ground truth) and at most one fast road per backend family. :func:`choose` is the only
place a road is chosen; ``method=`` on the public functions forces one.

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

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _native


STATISTICS = (
    "count",
    "sum",
    "mean",
    "var",
    "std",
    "sem",
    "min",
    "max",
    "first",
    "last",
    "skew",
    "kurt",
    "median",
    "quantile",
)
# statistics between channels: a (C, C) matrix per subset (not in STATISTICS: the stream,
# shard and the command compute per-channel statistics only, and name these in their errors)
PAIR_STATISTICS = ("cov", "corr")
ALL_STATISTICS = STATISTICS + PAIR_STATISTICS
# the points each entry of "cov"/"corr" is made of, (K, C, C) ints: an internal result key the
# roads add beside them (``rolling_statistic``'s ``min_periods`` reads it)
PAIR_COUNT = "count(pairs)"
DEFAULT_DDOF = 0

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
}
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
    """The shape of ``statistic`` over subsets of batch shape ``batch`` of ``(N, *ch)`` data."""
    return batch + ch + ch if statistic in PAIR_STATISTICS else batch + ch


def is_count(key: str) -> bool:
    """Whether a result key holds integer counts (never cast to the float dtype)."""
    return key in ("count", PAIR_COUNT)


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


def backend() -> str:
    """The backend family the computation is traced for (``"cpu"``, ``"gpu"``, ``"tpu"``)."""
    return jax.default_backend()


# The padded road gathers ``K * capacity`` slots and reduces them in one masked pass (in
# batches of bounded memory); the tree builds tables over all ``N`` points whatever ``K``.
# Where a static bound on the ranges' lengths is known and the slots are at most these many
# per point (a few long ranges: chunks, bins, selections, windows of a few points), "auto"
# takes the padded road: the smaller program to compile, the cheaper one to run on every
# backend, and the reference itself. The order statistics sort their slots (``K * capacity *
# log capacity``), so they take it at a lower ratio.
PADDED_SLOTS_PER_POINT = 8
PADDED_ORDER_SLOTS_PER_POINT = 2


def padded_fits(k: int, n: int, bound: int | None, capacity: int | None) -> tuple[bool, bool]:
    """Whether the padded road is the cheaper one for ``k`` ranges over ``n`` points.

    Part of THE road choice (``choose``'s ``padded``). The caller passes the real ``k`` and
    ``n`` (an eager call's buckets pad them), so a bucketed call takes the road an unbucketed
    one takes.

    Returns:
        ``(folded, order)``: for the folded statistics (fewer ranges than points, every one
        at most ``bound`` points long; None: unknown); for the order statistics, padded to
        their ``capacity`` (selections: the same bits for any number of ranges).
    """
    # windows (a range per point) keep their roads: an eager call pads their number with N,
    # and the padded road's sums, unlike the tree's folds, are not bit for bit the same for
    # another number of ranges (XLA's reduction order follows the shapes)
    folded = bound is not None and k < n and k * bound <= PADDED_SLOTS_PER_POINT * n
    n = max(n, 1)
    order = capacity is not None and k * capacity <= PADDED_ORDER_SLOTS_PER_POINT * n
    return folded, order


def choose(
    kind: str,
    statistic: str,
    method: str,
    func: str,
    padded: tuple[bool, bool] = (False, False),
) -> str:
    """THE road choice: which road computes ``statistic`` over subsets of ``kind``.

    Args:
        kind: ``"ranges"`` (contiguous index ranges of sorted x), ``"sliding"`` (trailing
            windows of a fixed number of points) or ``"labels"`` (a bin label per point, any
            order).
        statistic: a name of :data:`STATISTICS`.
        method: ``"auto"`` or a road name (validated by :func:`check_method`).
        func: the public function, for error messages.
        padded: for ``"ranges"``, :func:`padded_fits`' answer: whether the padded road is
            the cheaper one for the folded and for the order statistics.

    Returns:
        The road's name. ``"auto"`` picks the fast road of the backend family, or the padded
        road where its slots are few (:func:`padded_fits`); a forced road that
        cannot compute ``statistic`` is an error naming both.
    """
    roads = {"ranges": RANGE_ROADS, "sliding": SLIDING_ROADS}.get(kind, LABEL_ROADS)
    statistic = base_name(statistic)
    if method == "auto" and kind != "labels" and native_first(statistic):
        return "native"
    if method == "auto":
        if kind == "sliding":
            # fixed-count windows are static: the O(N) block road on every backend (sums as a
            # matmul on the CPU, cumulative sums elsewhere); the rest as ranges
            if statistic in SLIDING_ROADS["blocks"]:
                return "blocks"
            return choose("ranges", statistic, method, func)
        if kind == "ranges":
            if padded[statistic in ORDER]:
                return "reference"
            # the order statistics: the wavelet road on every backend (sorts, scatters of
            # unique indices, gathers), O(log capacity) per range instead of a padded sort
            return "tree" if statistic in RANGE_ROADS["tree"] else "wavelet"
        # scatters are fast on the CPU; on GPUs/TPUs scatter-adds serialise on collisions, so
        # there one sort groups the points and the range road finishes (as it does for the
        # statistics the scatter road has no formula for)
        fast = backend() == "cpu" and statistic in LABEL_ROADS["scatter"]
        return "scatter" if fast else "sort"
    if method == "native" and not _native.available():
        raise RuntimeError(
            f"{func}: method='native' cannot run here: the native road is "
            f"{_native.status()}; use method='auto'"
        )
    if statistic not in roads[method]:
        raise ValueError(
            f"{func}: method={method!r} cannot compute {statistic!r}; it computes "
            f"{', '.join(map(repr, roads[method]))}"
        )
    return method


def native_first(statistic: str) -> bool:
    """Whether ``"auto"`` takes the native road for ``statistic`` (of ranges or windows).

    Part of THE road choice: on the CPU where the kernels are available
    (``jaxsubset._native.usable``: built, safe for the running jaxlib, not switched off by
    ``JAXSUBSET_NATIVE=off``), for the statistics they compute.
    """
    return statistic in RANGE_ROADS["native"] and _native.usable()


def needs_capacity(road: str, statistic: str) -> bool:
    """Whether ``road`` needs a static ``capacity`` (a bound on the points of a range) for
    ``statistic``: the padded roads always; the native road for the order statistics (its
    pure-JAX branch and derivative are the wavelet road's)."""
    return road in CAPACITY_ROADS or (road == "native" and base_name(statistic) in ORDER)


def choose_windows(fixed_count: bool, method: str) -> str:
    """How x-width windows are reduced: ``"sliding"`` (fixed-count windows) or ``"ranges"``.

    Part of THE road choice (with :func:`choose`): where every window of an eager call holds
    the same number of points, trailing (or leading by a fixed number of rows) and cut only
    at the ends of the data (evenly spaced x, a width a multiple of its step; checked on the
    resolved ranges themselves, so the windows are exactly the x-width ones), ``"auto"``
    reduces them as fixed-count windows, whose statistics then take the O(N) block road
    where it has them. A forced road (``"tree"``, ``"reference"``) keeps the ranges.
    """
    return "sliding" if fixed_count and method == "auto" else "ranges"


def choose_bins(x_sorted: bool, stats: tuple[str, ...], method: str) -> str:
    """How disjoint bins are reduced: ``"labels"`` (a bin label per point) or ``"ranges"``.

    Part of THE road choice (with :func:`choose`): bins of sorted x are also index ranges.
    On the CPU, ``"auto"`` reduces bins by labels (scatters are O(N) and cache-friendly there,
    whatever the order); elsewhere sorted bins are ranges on the tree, except the median
    (the range median is the padded one), and unsorted bins are labels (one sort).
    """
    if method in ("scatter", "sort"):
        return "labels"
    if method in ("tree", "wavelet", "native"):
        return "ranges"
    if method == "reference":
        return "ranges" if x_sorted else "labels"
    if x_sorted and method == "auto" and all(native_first(base_name(s)) for s in stats):
        return "ranges"  # the native road: one O(N) pass over the sorted bins
    if backend() == "cpu" or not x_sorted or any(base_name(s) in ORDER for s in stats):
        return "labels"
    return "ranges"
