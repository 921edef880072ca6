"""The native CPU road: C++ kernels (csrc/) registered through XLA's FFI.

The statistics dispatcher takes this road on the CPU by itself (``method="auto"``) where the
kernels are available, and ``method="native"`` forces it; this module is the small API around
it:

- :func:`available` / :func:`status`: whether the kernels are built, safe for the running
  jaxlib (the import guard, ``_load``) and not switched off (``JAXSUBSET_NATIVE=off``);
- :func:`portable` / :func:`portable_lowering`: whether a native call keeps the pure-JAX
  road beside it for other platforms (a non-CPU backend in the process, or
  ``JAXSUBSET_NATIVE_PORTABLE=1``); else the call is emitted alone and the pure-JAX road is
  traced only for a derivative;
- ``native_ranges`` / ``native_sliding`` / ``native_xwidth`` / ``native_bins``: the kernels
  behind the dispatcher (custom_jvp, vmap).

Results follow the library's conventions (``jaxsubset.reduce._registry``) and its
exactness contract: every result combines only partials of its own range's points.
"""

from ._api import (
    STATISTICS,
    bypass,
    native_ranges,
    native_sliding,
    native_xwidth,
    portable,
    portable_lowering,
    usable,
)
from ._bins import native_binnumber, native_bins, x_resolvable
from ._ewm import native_ewm, time_parts as ewm_time_parts
from ._load import NativeUnavailableWarning, available, status


__all__ = [
    "STATISTICS",
    "NativeUnavailableWarning",
    "available",
    "bypass",
    "ewm_time_parts",
    "native_binnumber",
    "native_bins",
    "native_ewm",
    "native_ranges",
    "native_sliding",
    "native_xwidth",
    "portable",
    "portable_lowering",
    "status",
    "usable",
    "x_resolvable",
]
