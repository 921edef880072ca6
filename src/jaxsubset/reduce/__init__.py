"""The reduce layer: HOW a statistic is computed over subsets that :mod:`..resolve` found.

Three seams, top to bottom:

- :class:`Request` (:mod:`._request`): what a public function asks for, as one frozen object
  (statistics, layout kind, ``method``, ``ddof``, ``omit``, ``capacity``, ``min_periods``, and
  the chooser's ``bound``/``padded``), which the dispatchers take beside the arrays.
- :func:`choose` (:mod:`._choose`): THE road choice. Given a request and the static facts of
  the call it returns a :class:`Choice`: the layout (index ranges, fixed-count windows, bin
  labels) and the road of every statistic. ``method=`` overrides ``"auto"``; every public
  statistic function asks it at its boundary and the dispatchers take each statistic's road
  from :func:`road`, so :func:`explain` (public as ``jaxsubset.explain``) prints what runs.
- the statistic table (:mod:`._registry`: names, conventions, road tables, and one
  :class:`Entry` per statistic, :func:`entry`: its partials, its fold, its finish, its empty
  value and result shape) and the formulas every road and :class:`jaxsubset.Subsets` share:
  the folds (:mod:`._folds`: how partials combine, and their identity: ``Sum``, ``Extreme``,
  Chan's ``Moments``, Pébay's ``Moments4``, ``Pairs``) and the finishes (:mod:`._finish`:
  sum, mean, extremes and spread from a road's partials; :mod:`._moments`, :mod:`._pairs`,
  :mod:`._median`: central moments, channel pairs, ranks and interpolation). The roads
  themselves live one layer up, in :mod:`jaxsubset._statistics` (the dispatchers
  ``_dispatch``/``_labels``, the roads ``_reference`` (padded, the ground truth), ``_tree``,
  ``_sliding`` (blocks), ``_wavelet``, ``_labels`` (scatter/sort)), and take their road from
  :func:`road`. A native CPU road joins with a road-table entry and one branch in
  :func:`road`.

This package imports only the foundations (``jaxsubset._base``, ``jaxsubset._core``) and
``jaxsubset._native``; every other package imports these names from ``jaxsubset.reduce``,
never from its private modules.
"""

from ._choose import Choice, bins_layout, choose, fixed_count, padded_fits, road
from ._explain import Explanation, explain
from ._finish import (
    extreme_statistic as extreme_statistic,
    mean_statistic as mean_statistic,
    spread_statistics as spread_statistics,
    std_statistic as std_statistic,
    sum_statistic as sum_statistic,
)
from ._folds import (
    Extreme as Extreme,
    Fold as Fold,
    Moments as Moments,
    Moments4 as Moments4,
    Pairs as Pairs,
    Sum as Sum,
    pebay as pebay,
)
from ._median import (
    key_dtype as key_dtype,
    lerp as lerp,
    order_key as order_key,
    rank as rank,
    rounded as rounded,
    segment_median as segment_median,
    sorted_median as sorted_median,
    sorted_quantile as sorted_quantile,
)
from ._moments import chan as chan, shape_statistic as shape_statistic
from ._pairs import (
    combine as combine,
    pair_leaves as pair_leaves,
    pair_statistics as pair_statistics,
    pairs as pairs,
)
from ._registry import (
    BLOCK_BIN_STATISTICS as BLOCK_BIN_STATISTICS,
    CAPACITY_ROADS as CAPACITY_ROADS,
    DEFAULT_DDOF as DEFAULT_DDOF,
    LABEL_ROADS as LABEL_ROADS,
    ORDER as ORDER,
    PAIR_COUNT as PAIR_COUNT,
    PAIR_STATISTICS as PAIR_STATISTICS,
    RANGE_ROADS as RANGE_ROADS,
    SLIDING_ROADS as SLIDING_ROADS,
    STATISTICS as STATISTICS,
    TABLE as TABLE,
    Entry as Entry,
    backend as backend,
    base_name as base_name,
    block_size as block_size,
    check_method as check_method,
    check_pairs as check_pairs,
    check_statistics as check_statistics,
    entry as entry,
    float_dtype as float_dtype,
    fold_of as fold_of,
    is_count as is_count,
    needs_capacity as needs_capacity,
    quantile_q as quantile_q,
    result_shape as result_shape,
    with_quantile as with_quantile,
)
from ._request import Request


__all__ = [
    "BLOCK_BIN_STATISTICS",
    "CAPACITY_ROADS",
    "Choice",
    "DEFAULT_DDOF",
    "Entry",
    "Explanation",
    "Extreme",
    "Fold",
    "LABEL_ROADS",
    "Moments",
    "Moments4",
    "ORDER",
    "PAIR_COUNT",
    "PAIR_STATISTICS",
    "Pairs",
    "RANGE_ROADS",
    "Request",
    "SLIDING_ROADS",
    "STATISTICS",
    "Sum",
    "TABLE",
    "backend",
    "base_name",
    "bins_layout",
    "block_size",
    "chan",
    "check_method",
    "check_pairs",
    "check_statistics",
    "choose",
    "combine",
    "entry",
    "explain",
    "extreme_statistic",
    "fixed_count",
    "float_dtype",
    "fold_of",
    "is_count",
    "key_dtype",
    "lerp",
    "mean_statistic",
    "needs_capacity",
    "order_key",
    "padded_fits",
    "pair_leaves",
    "pair_statistics",
    "pairs",
    "pebay",
    "quantile_q",
    "rank",
    "result_shape",
    "road",
    "rounded",
    "segment_median",
    "shape_statistic",
    "sorted_median",
    "sorted_quantile",
    "spread_statistics",
    "std_statistic",
    "sum_statistic",
    "with_quantile",
]
