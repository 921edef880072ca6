"""The roads: how each statistic is computed once the chooser (:mod:`jaxsubset.reduce`) has
named its road. The dispatchers over index ranges and fixed-count windows (``_dispatch``) and
over bin labels (``_labels``), bins of sorted x by whole blocks (``_blocks``), and the roads
they call: ``_reference`` (padded Subsets reductions, the ground truth), ``_tree``,
``_sliding``, ``_wavelet``.

Other packages import these names from ``jaxsubset._statistics``, never from its private
modules; the roads import the statistic table and formulas from ``jaxsubset.reduce``.
"""

from ._blocks import sorted_bins as sorted_bins
from ._dispatch import (
    clip_ranges as clip_ranges,
    finish as finish,
    median_capacity as median_capacity,
    range_bound as range_bound,
    reduce_ranges as reduce_ranges,
    reduce_sliding as reduce_sliding,
)
from ._labels import (
    clean_labels as clean_labels,
    group_by_label as group_by_label,
    reduce_labels as reduce_labels,
)


__all__ = [
    "clean_labels",
    "clip_ranges",
    "finish",
    "group_by_label",
    "median_capacity",
    "range_bound",
    "reduce_labels",
    "reduce_ranges",
    "reduce_sliding",
    "sorted_bins",
]
