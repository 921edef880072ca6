"""Sliding windows from pieces: windows that are unions of whole ``step``-chunks, on the host.

With ``size`` a multiple of ``step``, the chunks of ``step`` points stream as a reshape of each
block (every point read once) and the windows' sums, counts, minima and maxima are combined
from them with a few vectorised NumPy passes.
"""

from typing import Any

import numpy as np

from .plan import Plan
from .sources import canon


PIECES_STATS = ("count", "sum", "mean", "min", "max", "valid")


MAX_PIECES = 32  # pieces per window: the host combines them with as many vectorised passes


def by_pieces(
    pl: Plan, kind: str, stats: tuple[str, ...], fn: Any, nan_policy: str
) -> tuple[int, tuple[str, ...]] | None:
    """``(step, piece statistics)`` when sliding windows are unions of whole ``step``-pieces.

    With ``size`` a multiple of ``step`` every window is ``size // step`` consecutive pieces,
    all full (sliding windows lie inside the data), and sums, counts, minima and maxima of a
    window follow from its pieces'. The pieces are chunks, which stream as a reshape of each
    block (no halo, no gather: each point is read once instead of ``size / step`` times).
    """
    if kind != "sliding" or fn is not None or nan_policy not in ("propagate", "omit"):
        return None
    if any(s not in PIECES_STATS for s in stats):
        return None
    step, size = pl.provider.step, pl.provider.size
    if size % step or size // step > MAX_PIECES:
        return None
    need = []
    if "sum" in stats or "mean" in stats:
        need.append("sum")
    need += [s for s in ("min", "max") if s in stats]
    if "valid" in stats or (nan_policy == "omit" and "mean" in stats):
        need.append("valid")
    return step, tuple(need) or ("sum",)


def combine_pieces(
    res: dict[str, Any], stats: tuple[str, ...], size: int, step: int, big_n: int, nan_policy: str
) -> dict[str, Any]:
    """Sliding-window results from the results of their pieces (see :func:`by_pieces`).

    Sums add (in another order than one reduction over the window: ~1 ulp apart), minima and
    maxima are exact (``fmin``/``fmax`` skip the NaN of a piece without readings under "omit",
    as the window reduction would); means divide by the window's count or valid readings.
    """
    r = size // step
    k = (big_n - size) // step + 1
    omit = nan_policy == "omit"

    def windows(a: np.ndarray, op: Any) -> np.ndarray:
        out = np.array(a[:k])
        for j in range(1, r):
            op(out, a[j : j + k], out=out)
        return out

    out: dict[str, Any] = {
        "start": np.arange(k, dtype=res["start"].dtype) * step,
        "count": np.full(k, size, res["count"].dtype),
        "overflow": np.zeros(k, bool),
    }
    # the pieces' sums and valid counts, whichever by_pieces asked for
    added: dict[str, np.ndarray] = {
        name: windows(res[name], np.add) for name in ("sum", "valid") if name in res
    }
    for name in stats:
        if name in ("sum", "valid"):
            out[name] = added[name]
        elif name == "mean":  # in y's float dtype, as Subsets.mean
            total = added["sum"]
            fdt = total.dtype if total.dtype.kind == "f" else canon(np.float64)
            num = total.astype(fdt)
            if omit:  # over the real readings; NaN for windows without any
                valid = added["valid"]
                out[name] = num / np.maximum(valid, 1).astype(fdt)
                out[name][valid == 0] = np.nan
            else:
                out[name] = num / np.asarray(size, fdt)
        elif name in ("min", "max"):
            fold = {"min": (np.minimum, np.fmin), "max": (np.maximum, np.fmax)}[name]
            out[name] = windows(res[name], fold[omit])
    return out
