"""The reduce layer: HOW a statistic is computed over subsets that :mod:`..resolve` found.

Three seams, top to bottom:

- :class:`Request` (:mod:`._request`): what a public function asks for, as one frozen object
  (statistics, layout kind, ``method``, ``ddof``, ``omit``, ``capacity``, ``min_periods``).
- :func:`choose` (:mod:`._choose`): THE road choice. Given a request and the static facts of
  the call it returns a :class:`Choice`: the layout (index ranges, fixed-count windows, bin
  labels) and the road of every statistic. ``method=`` overrides ``"auto"``; every public
  statistic function asks it at its boundary and the dispatchers take each statistic's road
  from :func:`road`, so :func:`explain` (public as ``jaxsubset.explain``) prints what runs.
- the roads (today in :mod:`jaxsubset._statistics`: the statistic table and road tables in
  ``_registry``, the dispatchers in ``_dispatch``/``_labels``, the roads ``_reference``
  (padded, the ground truth), ``_tree``, ``_sliding`` (blocks), ``_wavelet``, ``_labels``
  (scatter/sort)). A native CPU road joins with a road-table entry and one branch in
  :func:`road`.
"""

from ._choose import Choice, choose, fixed_count, padded_fits, road
from ._explain import Explanation, explain
from ._request import Request


__all__ = [
    "Choice",
    "Explanation",
    "Request",
    "choose",
    "explain",
    "fixed_count",
    "padded_fits",
    "road",
]
