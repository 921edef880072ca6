"""The command's figures: a fixed size on the Agg canvas (no pyplot, no GUI), saved atomically."""

import os
from typing import Any

import numpy as np

import jaxsubset

from ._files import InputError
from ._reader import XY
from ._writer import atomic_output


PLOT_SUFFIXES = (".png", ".pdf", ".svg")
FIGSIZE = (8.0, 4.5)  # inches; at DPI this is 800 x 450 pixels
DPI = 100


def require_matplotlib(what: str) -> None:
    """An :class:`InputError` naming ``what`` when matplotlib (the ``plot`` extra) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(
            f"{what} needs matplotlib, which is not installed: pip install 'jaxsubset[plot]'"
        ) from None


def new_figure() -> tuple[Any, Any]:
    """A figure of FIGSIZE at DPI on the Agg canvas, without pyplot (no GUI, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def save_figure(fig: Any, path: str) -> None:
    """Save ``fig`` atomically to ``path`` (its extension picks the format)."""
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    with atomic_output(path) as tmp:
        fig.savefig(tmp, format=fmt, dpi=DPI)


def stats_figure(
    xy: XY, ranges: Any, values: dict[str, np.ndarray], stats: tuple[str, ...], what: str
) -> Any:
    """The ``--plot`` figure: the data, the subsets shaded and the first statistic."""
    stat = next((s for s in stats if s not in ("count", "valid")), stats[0])

    def label(name: str) -> str:  # headerless files name their columns "0", "1", ...
        return f"column {name}" if name.isdigit() else name

    v = values[stat][:, 0].astype(np.float64)
    fig, ax = new_figure()
    jaxsubset.plot_subsets(
        xy.x.view("datetime64[ns]") if xy.x_time else xy.x,
        xy.y[:, 0],
        ranges,
        ax=ax,
        values=v,
        value_label=stat,
        xlabel=label(xy.x_name),
        ylabel=label(xy.y_names[0]),
        title=f"{stat} of {label(xy.y_names[0])} over {what}",
    )
    fig.tight_layout()
    return fig
