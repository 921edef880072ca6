"""The demo's figures keep their legend off the data and give every legend entry something
visible; the demo says which JAX mode it computes in and hands the caller's mode back."""

import jax
import numpy as np
import pytest

import jaxsubset


matplotlib = pytest.importorskip("matplotlib")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def _legend_clear_of_axes(fig, ax):
    """The legend's box and the axes' box (in pixels, after drawing) do not overlap."""
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    axes = ax.get_window_extent()
    assert legend.x0 >= axes.x1 or legend.y1 <= axes.y0 or legend.y0 >= axes.y1, (legend, axes)
    # and inside the figure (tight_layout made room for it, nothing cut off)
    assert legend.x1 <= fig.bbox.x1 + 0.5 and legend.x0 >= fig.bbox.x0 - 0.5


def _visible_pixels(fig, line):
    """How many pixels of the canvas change when ``line`` is hidden: what it shows."""
    fig.canvas.draw()
    with_it = np.asarray(fig.canvas.buffer_rgba()).copy()
    line.set_visible(False)
    fig.canvas.draw()
    without = np.asarray(fig.canvas.buffer_rgba())
    line.set_visible(True)
    return int(np.any(with_it != without, axis=-1).sum())


@pytest.mark.one_mode  # the command switches 64-bit mode on itself
def test_demo_legends_off_the_data_and_every_entry_visible(tmp_path, monkeypatch, capsys):
    import jaxsubset.cli._demo as demo

    figures = []
    monkeypatch.setattr(demo, "save_figure", lambda fig, path: figures.append(fig))
    assert jaxsubset.cli.main(["demo", "--out", str(tmp_path), "--n-points", "400"]) == 0
    assert len(figures) == 6  # subset_0..4 and the overview
    for fig in figures:
        (ax,) = fig.axes
        _legend_clear_of_axes(fig, ax)
        for handle, text in zip(
            ax.get_legend().legend_handles, ax.get_legend().get_texts(), strict=True
        ):
            label = text.get_text()
            # the artist the entry stands for: a line carrying that label (the data, a
            # subset), or the dotted mean bars (a collection; their entry is a proxy line)
            drawn = [a for a in ax.lines + ax.collections if a.get_label() == label]
            drawn = [a for a in drawn if not (hasattr(a, "get_xdata") and not len(a.get_xdata()))]
            if not drawn:  # a proxy entry (the overview's "mean"): the bars it stands for
                assert label == "mean" and ax.collections, label
                drawn = list(ax.collections)
            assert handle.get_visible()
            assert sum(_visible_pixels(fig, a) for a in drawn) > 50, label


def test_plot_subsets_data_stays_visible_over_covering_subsets():
    """Subsets covering every point: the dashed data is still drawn on top of them."""
    fig = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    x = np.linspace(0.0, 10.0, 500)
    y = np.sin(2 * np.pi * x)
    jaxsubset.plot_subsets(x, y, jaxsubset.ranges.chunks(x, 5), ax=ax, values=np.zeros(5))
    fig.tight_layout()
    _legend_clear_of_axes(fig, ax)
    data = ax.get_lines()[0]
    assert data.get_label() == "data"
    assert data.get_zorder() > max(line.get_zorder() for line in ax.get_lines()[1:])
    assert _visible_pixels(fig, data) > 500


def test_plot_subsets_new_figure_keeps_the_legend_inside_the_figure():
    x = np.linspace(0.0, 1.0, 50)
    ax = jaxsubset.plot_subsets(x, x, jaxsubset.ranges.chunks(x, 3))
    try:
        _legend_clear_of_axes(ax.figure, ax)
    finally:
        import matplotlib.pyplot as plt

        plt.close(ax.figure)


@pytest.mark.one_mode  # sets the mode itself, both ways
@pytest.mark.parametrize("x64", [False, True])
def test_demo_says_its_mode_and_leaves_the_callers(x64, tmp_path, monkeypatch, capsys):
    import jaxsubset.cli._demo as demo

    monkeypatch.setattr(demo, "save_figure", lambda fig, path: None)
    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", x64)
    try:
        assert jaxsubset.cli.main(["demo", "--out", str(tmp_path), "--n-points", "50"]) == 0
        assert jax.config.read("jax_enable_x64") == x64  # the caller's mode, as it was
    finally:
        jax.config.update("jax_enable_x64", before)
    out = capsys.readouterr().out
    assert "float64: JAX's 64-bit mode is on for this run only" in out
