"""Figures of data and subsets (matplotlib, the optional ``plot`` extra; imported lazily)."""

from typing import Any

import numpy as np

from ._core import ArrayLike
from ._subsets import Subsets
from .resolve import Ranges


def starts_counts(subsets_or_ranges: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(subsets_or_ranges, Subsets | Ranges):
        raise TypeError(
            "plot_subsets: `subsets_or_ranges` must be jaxsubset.Subsets or jaxsubset.Ranges, "
            f"got {type(subsets_or_ranges).__name__}"
        )
    start = np.asarray(subsets_or_ranges.start).reshape(-1).astype(np.int64)
    count = np.asarray(subsets_or_ranges.count).reshape(-1).astype(np.int64)
    start, count = np.broadcast_arrays(start, count)
    start = np.clip(start, 0, n)
    return start, np.clip(count, 0, n - start)


def as_number(x: np.ndarray) -> np.ndarray:
    """Positions as float64 for spacing arithmetic (datetime64 as nanoseconds)."""
    if x.dtype.kind in "mM":
        unit = "datetime64[ns]" if x.dtype.kind == "M" else "timedelta64[ns]"
        return x.astype(unit).view(np.int64).astype(np.float64)
    return x.astype(np.float64)


def gap_threshold(x: ArrayLike, gap_factor: float | None) -> float | None:
    """The spacing above which the line breaks: ``gap_factor`` times the median positive
    spacing of ``x`` (duplicates, spacing 0, do not count); None when nothing breaks."""
    if gap_factor is None:
        return None
    d = np.diff(as_number(np.asarray(x)))
    d = d[d > 0]
    return float(gap_factor * np.median(d)) if d.size else None


def break_gaps(x: ArrayLike, y: ArrayLike, threshold: float | None) -> tuple[np.ndarray, ...]:
    """``(x, y)`` with a NaN point inserted in the middle of every step wider than
    ``threshold``, so that a plotted line stops at a gap instead of bridging it.

    Missing readings (NaN in ``y``) already break a matplotlib line; this adds breaks where
    the samples themselves are missing (irregular sampling, a station down for a season).
    """
    x = np.asarray(x)
    y = np.asarray(y, dtype=np.float64)
    if threshold is None or x.shape[0] < 2:
        return x, y
    d = np.diff(as_number(x))
    at = np.flatnonzero(d > threshold)
    if at.size == 0:
        return x, y
    mid = x[at] + (x[at + 1] - x[at]) / 2 if x.dtype.kind in "mM" else (x[at] + x[at + 1]) / 2
    x2 = np.insert(x, at + 1, mid.astype(x.dtype) if x.dtype.kind in "mM" else mid)
    y2 = np.insert(y, at + 1, np.nan, axis=0)
    return x2, y2


def plot_subsets(
    x: ArrayLike,
    y: ArrayLike,
    subsets_or_ranges: Subsets | Ranges,
    *,
    ax: Any = None,
    values: ArrayLike | None = None,
    value_label: str = "statistic",
    xlabel: str = "x",
    ylabel: str = "y",
    title: str | None = None,
    max_shaded: int = 40,
    gap_factor: float | None = 5.0,
) -> Any:
    """Draw the data dashed black and each subset in colour over its shaded x extent.

    With few subsets (at most ``max_shaded``) every subset's points are drawn in their own
    colour over a lightly shaded span, and ``values`` (one per subset, e.g. a mean) as a
    dotted horizontal bar of the same colour across the subset. With more (sliding or rolling
    windows, one per point) the shading would hide the data, so ``values`` are drawn as a line
    through the subsets' centres instead. Gaps show as gaps: the lines break at missing
    readings (NaN in ``y``) and across steps in ``x`` wider than ``gap_factor`` times the
    median spacing. ``x`` may be ``datetime64`` (a time axis, drawn with date ticks). The
    legend sits to the right of the axes, outside the data (``fig.tight_layout()`` or a
    constrained layout makes room for it; a new figure has one). Needs matplotlib
    (``pip install 'jaxsubset[plot]'``), imported only here.

    Args:
        x: ``(N,)`` sorted sample positions.
        y: ``(N,)`` or ``(N, C)`` values (each channel drawn dashed).
        subsets_or_ranges: :class:`Subsets` or :class:`Ranges` on these arrays; any batch
            shape (flattened, ``K`` subsets).
        ax: a matplotlib ``Axes`` to draw into; default a new ``pyplot`` figure.
        values: optional ``(K,)`` statistic per subset, overlaid (NaN ones skipped).
        value_label: legend label of ``values``.
        xlabel: x axis label.
        ylabel: y axis label.
        title: optional axes title.
        max_shaded: the most subsets drawn one by one.
        gap_factor: break the lines where consecutive points are further apart than this
            times the median positive spacing of ``x``; None never breaks them there.

    Returns:
        The matplotlib ``Axes`` drawn into.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> from matplotlib.figure import Figure
        >>> x = jnp.linspace(0.0, 1.0, 50)
        >>> r = jaxsubset.ranges.chunks(x, 3)
        >>> ax = jaxsubset.plot_subsets(x, x**2, r, ax=Figure().subplots(), values=[0, 0.2, 0.7])
        >>> ax.get_xlabel(), [t.get_text() for t in ax.get_legend().get_texts()]
        ('x', ['data', 'subset 0', 'subset 1', 'subset 2', 'statistic'])
    """
    x_np, y2, start, count, vals = checked_inputs(x, y, subsets_or_ranges, values)
    if ax is None:
        import matplotlib.pyplot as plt

        # constrained layout makes room for the legend outside the axes
        _, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    else:
        import matplotlib  # noqa: F401  (a clear ImportError here if it is missing)
    gap = gap_threshold(x_np, gap_factor)
    draw_data(ax, x_np, y2, gap)
    k = start.shape[0]
    # first/last are only read where the subset is not empty (no NaN: x may be datetime64)
    first = x_np[np.clip(start, 0, max(len(x_np) - 1, 0))] if len(x_np) else np.zeros(k)
    last = x_np[np.clip(start + count - 1, 0, max(len(x_np) - 1, 0))] if len(x_np) else first
    ok = count > 0
    if vals is not None:
        ok = ok & np.isfinite(vals)
    if k <= max_shaded:
        draw_shaded(ax, x_np, y2, start, count, first, last, gap)
        if vals is not None:
            colours = [f"C{i % 10}" for i in np.flatnonzero(ok)]
            ax.hlines(vals[ok], first[ok], last[ok], colors=colours, linestyles=":", lw=2.5)
            ax.plot([], [], ":", color="dimgray", lw=2.5, label=value_label)
    elif vals is not None:
        centre = first + (last - first) / 2
        if centre.dtype.kind in "mM":
            centre = centre.astype(x_np.dtype)
        cx, cv = centre[ok], vals[ok]
        line = break_gaps(cx, cv, gap_threshold(cx, gap_factor))
        ax.plot(*line, "-", color="crimson", lw=1.5, label=f"{value_label} ({k} subsets)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    legend_outside(ax)
    return ax


def checked_inputs(
    x: ArrayLike, y: ArrayLike, subsets_or_ranges: Any, values: ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``x``, ``y`` as ``(N, C)``, the subsets' starts and counts and the ``(K,)`` values,
    checked with errors naming the argument."""
    x_np = np.asarray(x)
    y_np = np.asarray(y)
    if x_np.ndim != 1:
        raise ValueError(f"plot_subsets: `x` must be 1-D, got shape {x_np.shape}")
    if y_np.ndim not in (1, 2) or y_np.shape[0] != x_np.shape[0]:
        raise ValueError(
            f"plot_subsets: `y` must have shape (N,) or (N, C) with N = len(x) = "
            f"{x_np.shape[0]}, got {y_np.shape}"
        )
    start, count = starts_counts(subsets_or_ranges, x_np.shape[0])
    k = start.shape[0]
    vals = None
    if values is not None:
        vals = np.asarray(values, dtype=np.float64).reshape(-1)
        if vals.shape[0] != k:
            raise ValueError(
                f"plot_subsets: `values` must hold one value per subset ({k}), got {vals.shape[0]}"
            )
    return x_np, y_np.reshape(x_np.shape[0], -1), start, count, vals


def draw_data(ax: Any, x: np.ndarray, y2: np.ndarray, gap: float | None) -> None:
    """Each channel dashed black, on top of the subsets' coloured lines (zorder 2), so the
    data stays visible where the subsets cover all of it."""
    for c in range(y2.shape[1]):
        xb, yb = break_gaps(x, y2[:, c], gap)
        ax.plot(xb, yb, "--", color="black", lw=1.0, zorder=2.5, label="data" if c == 0 else None)


def draw_shaded(
    ax: Any,
    x: np.ndarray,
    y2: np.ndarray,
    start: np.ndarray,
    count: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    gap: float | None,
) -> None:
    """Each non-empty subset in its own colour over a lightly shaded span; one legend entry
    per subset up to 10, one for all of them beyond."""
    k = start.shape[0]
    for i in range(k):
        if count[i] <= 0:
            continue
        colour = f"C{i % 10}"
        sl = slice(start[i], start[i] + count[i])
        ax.axvspan(first[i], last[i], color=colour, alpha=0.12, lw=0)
        for c in range(y2.shape[1]):
            label = f"subset {i}" if c == 0 and k <= 10 else None
            # wider than the dashed data drawn over it
            ax.plot(*break_gaps(x[sl], y2[sl, c], gap), "-", color=colour, lw=3.0, label=label)
    if k > 10:  # one legend entry for all of them
        ax.plot([], [], "-", color="C0", lw=3.0, label=f"{k} subsets")


def legend_outside(ax: Any) -> Any:
    """The legend to the right of the axes, top-aligned, so that it never hides data; a
    figure's ``tight_layout`` or constrained layout makes room for it."""
    return ax.legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small"
    )
