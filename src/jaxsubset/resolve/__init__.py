"""The resolve layer: WHAT the subsets are, as contiguous index ranges ``(start, count)``.

``x`` is sorted, so every subset is a contiguous index range. The constructors differ only in how
they compute ``(start, count)`` (Python arithmetic for static layouts, a search in x for
x-bounds); all of them end in the same gather (:func:`from_ranges`).

All constructors accept ``length``: the number of real points when a dataset was padded to a
common length by :func:`jaxsubset.pack` (points at and past ``length`` are never selected).

Called eagerly (every argument concrete, no ``length``), the constructors pad the data to a
bucket of lengths and run one compiled program per bucket (:mod:`._buckets`); the ``Subsets``
are exactly the unpadded call's.

Modules, each one idea (imports go down this list, never up):

- :mod:`._type`: the :class:`Ranges` pytree (what every request resolves to) and its gather.
- :mod:`._keys`: the ONE order-preserving key codec (:func:`keys`) and the exact arithmetic of
  bounds on it (``at - width``, ``at + after``, saturating); ``host_*`` are the NumPy forms
  for concrete values, which ``stream``'s planner calls too.
- :mod:`._exact`: exact positions in JAX's 32-bit mode (resolved as in 64-bit mode, in a
  scoped ``jax_enable_x64``, or refused by name): the decorators every family's resolver
  and gather wear, and the host checks the statistics call before they resolve.
- :mod:`._search`: ``searchsorted`` in key space, its algorithms named (``"probe"``,
  ``"keys"``, ``"guided"``) and documented as ``jnp.searchsorted(method=)`` documents its own.
- :mod:`._buckets`: the eager buckets' helpers (pad, cut); :mod:`._eager`'s ONE
  decorator, ``bucketed``, runs a traced resolver as one program per bucket of shapes
  (every family: its programs are named ``eager_*``).
- one module per family: :mod:`._index` (explicit ranges, slices, chunks, sliding windows),
  :mod:`._xranges` (``select``, ``nearest``), :mod:`._windows` (x-width ``rolling`` windows),
  :mod:`._bins` (histogram bins and calendar periods), :mod:`._dynamic` (hopping/tumbling
  windows, on top of :func:`select_ranges`; their steps and counts in :mod:`._hop`).

Each public ``jaxsubset.ranges`` function is a thin wrapper of a private ``resolve_*``
function that also takes the caller's name for its messages (``func``) and, for windows, the
switches the eager programs need (``time``, ``guided``, ``checked``): no private keyword is
in a public signature. A walk of ``x`` from :func:`select` goes down: validate
(:mod:`jaxsubset._core._validate`), keys (:mod:`._keys`), search (:mod:`._search`), gather
(:mod:`jaxsubset._subsets`, a package).

The rules, in one place (``stream`` resolves with the same functions):

- ``closed``: :func:`sides`; bins are ``numpy.histogram``'s (half-open, the last closed).
- Bounds are compared exactly, as order-preserving integer keys of x's dtype (:func:`keys`):
  integer bounds of any size, float bounds on integer x (rounded toward the side that keeps
  the count), subnormal floats (which XLA on CPU flushes in float comparisons), -0.0 == 0.0.
- Index ranges are clipped to ``[0, N)``, never shifted; integer bounds are clipped on the
  host before they meet the index dtype, so nothing wraps in JAX's 32-bit mode.
- One x-width window per point follows pandas' row rule for ties; ``at - width`` saturates.
"""

from ._bins import bin_ranges, bins, check_edges
from ._buckets import eager
from ._dynamic import dynamic, dynamic_bounds, dynamic_ranges, host_windows
from ._eager import bucketed
from ._exact import binned_exact, binned_wide, once64, wide, x64
from ._index import (
    bucketed_gather,
    chunk_ranges,
    chunks,
    from_ranges,
    gather,
    isolate,
    isolate_ranges,
    sliding,
    sliding_ranges,
)
from ._keys import (
    host_anchored_lower,
    host_anchored_upper,
    host_key,
    host_lower,
    host_upper,
    int_width,
    keys,
    sides,
    traced_key,
    unkeys,
    width_operand,
)
from ._type import Ranges, pieces_of, real_length, to_subsets
from ._windows import (
    bucketed_ranges,
    guard_width,
    resolve_rolling,
    rolling,
    rolling_ranges,
    window_widths,
)
from ._xranges import nearest, resolve_select, select, select_ranges, xrange


__all__ = [
    "Ranges",
    "bin_ranges",
    "binned_exact",
    "binned_wide",
    "bins",
    "bucketed",
    "bucketed_gather",
    "bucketed_ranges",
    "check_edges",
    "chunk_ranges",
    "chunks",
    "dynamic",
    "dynamic_bounds",
    "dynamic_ranges",
    "eager",
    "from_ranges",
    "gather",
    "guard_width",
    "host_anchored_lower",
    "host_anchored_upper",
    "host_key",
    "host_windows",
    "host_lower",
    "host_upper",
    "int_width",
    "isolate",
    "isolate_ranges",
    "keys",
    "nearest",
    "once64",
    "pieces_of",
    "real_length",
    "resolve_rolling",
    "resolve_select",
    "rolling",
    "rolling_ranges",
    "select",
    "select_ranges",
    "sides",
    "sliding",
    "sliding_ranges",
    "to_subsets",
    "traced_key",
    "wide",
    "x64",
    "unkeys",
    "width_operand",
    "window_widths",
    "xrange",
]
