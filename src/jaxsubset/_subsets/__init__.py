"""The Subsets pytree: the padded, masked points of every subset (one gather from index
ranges), its reductions and its scatter back to the points.

It stands on the foundations (``jaxsubset._core``) and the statistic formulas
(``jaxsubset.reduce``); ``resolve/`` builds it and the reference road (``_statistics``)
reduces it. Other packages import these names from ``jaxsubset._subsets``.

Modules: ``_pytree`` (the class, the gather), ``_base`` (fields, masks, NaN handling, one
program per eager reduction), ``_moments``, ``_order``, ``_pairs`` (its statistics).
"""

from ._pytree import Subsets as Subsets, gather_padded as gather_padded, read_rows as read_rows


__all__ = ["Subsets", "gather_padded", "read_rows"]
