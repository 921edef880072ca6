"""TEMPORARY shim: ``_ranges`` became the :mod:`jaxsubset.resolve` package (issue 28).

Kept only so that branches written against the old module keep importing while they are merged;
new code imports from :mod:`jaxsubset.resolve` (or its modules). Delete once nothing imports it.
"""

from typing import Any

from .resolve import _bins, _buckets, _index, _keys, _search, _type, _windows, _xranges


_MODULES = (_type, _keys, _search, _buckets, _index, _xranges, _windows, _bins)
# the private names that were renamed when they started crossing module boundaries
_RENAMED = {
    "_length": "real_length",
    "_count": "count_keys",
    "_padded_xy": "padded_xy",
    "_period_edges": "period_bin_edges",
}


def __getattr__(name: str) -> Any:
    target = _RENAMED.get(name, name)
    for module in _MODULES:
        if hasattr(module, target):
            return getattr(module, target)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
