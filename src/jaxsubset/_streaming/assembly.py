"""Results home: per-call kernel outputs to NumPy, scattered into the subsets' order and shape."""

from typing import Any

import jax
import numpy as np


def assemble(parts: list[tuple[np.ndarray, Any]], n_out: int, shape: tuple[int, ...] | None) -> Any:
    """Scatter per-call results ``(index, pytree of (R, ...) arrays)`` into ``(K, ...)`` arrays."""
    if not parts:
        return None
    idx = np.concatenate([p[0] for p in parts])
    shape = (n_out,) if shape is None else shape

    def join(*leaves: Any) -> np.ndarray:
        vals = np.concatenate([np.asarray(v) for v in leaves])
        out = np.zeros((n_out,) + vals.shape[1:], vals.dtype)
        out[idx] = vals
        return out.reshape(shape + vals.shape[1:])

    return jax.tree_util.tree_map(join, *[p[1] for p in parts])


def bring_home(entry: tuple[np.ndarray, Any, int]) -> tuple[np.ndarray, Any, int]:
    """A kernel call's results as NumPy arrays, without the padding ranges."""
    idx, out, m = entry
    return idx, jax.tree_util.tree_map(lambda a: np.asarray(a)[:m], out), m
