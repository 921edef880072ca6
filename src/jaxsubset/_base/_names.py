"""The names of the statistics (:data:`STATISTICS`), without JAX.

The registry (:mod:`jaxsubset.reduce._registry`) imports them from here, so that the
command can check ``--stat`` before it imports jax (``import jaxsubset`` is lazy: its public
names are imported on first use).
"""

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
"""The name of every per-channel statistic of ``range_statistic``, ``rolling_statistic``,
``binned_statistic``, ``stream``, ``shard`` and the command (``--stat``), with one set of
conventions (``ddof=0``; an empty subset gives NaN, 0 for ``sum`` and ``count``; see the
docs' "Statistics and their conventions"). ``"quantile"`` takes ``q=``; the statistics
between channels, ``"cov"`` and ``"corr"``, are not in it."""
# statistics between channels: a (C, C) matrix per subset (not in STATISTICS: the stream,
# shard and the command compute per-channel statistics only, and name these in their errors)
PAIR_STATISTICS = ("cov", "corr")
