"""``jaxsubset.plot_subsets``: what it draws, on a bare Agg figure (no pyplot state)."""

import numpy as np
import pytest

import jaxsubset


matplotlib = pytest.importorskip("matplotlib")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def _ax():
    fig = Figure(figsize=(6, 3), dpi=100)
    FigureCanvasAgg(fig)
    return fig.add_subplot()


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_ranges_subsets_and_values():
    x = np.linspace(0.0, 10.0, 101)
    y = np.sin(x)
    r = jaxsubset.ranges.chunks(x, 4)
    means = np.array([np.mean(p) for p in np.array_split(y, 4)])
    ax = _ax()
    out = jaxsubset.plot_subsets(x, y, r, ax=ax, values=means, value_label="mean", xlabel="t")
    assert out is ax
    assert ax.get_xlabel() == "t" and ax.get_ylabel() == "y"
    assert _legend(ax) == ["data", "subset 0", "subset 1", "subset 2", "subset 3", "mean"]
    data = ax.get_lines()[0]
    assert data.get_linestyle() == "--" and data.get_color() == "black"
    np.testing.assert_array_equal(data.get_ydata(), y)
    # each subset's own points, in colour
    for k, piece in enumerate(np.array_split(np.arange(101), 4)):
        line = ax.get_lines()[1 + k]
        np.testing.assert_array_equal(line.get_xdata(), x[piece])
        assert line.get_color() == f"C{k}"
    assert len(ax.patches) == 4  # the shaded spans
    # the values, one bar per subset at the right height and extent
    (bars,) = ax.collections
    segs = bars.get_segments()
    np.testing.assert_allclose([s[0][1] for s in segs], means)
    pieces = np.array_split(np.arange(101), 4)
    np.testing.assert_allclose([s[0][0] for s in segs], [x[p[0]] for p in pieces])
    np.testing.assert_allclose([s[1][0] for s in segs], [x[p[-1]] for p in pieces])


def test_subsets_input_with_empty_subset_and_channels():
    x = np.arange(10.0)
    y = np.stack([x, -x], axis=1)
    s = jaxsubset.select(x, y, np.array([1.0, 20.0, 5.0]), np.array([4.0, 30.0, 8.0]), capacity=4)
    ax = jaxsubset.plot_subsets(x, y, s, ax=_ax(), values=np.array([1.0, np.nan, 2.0]))
    assert _legend(ax) == ["data", "subset 0", "subset 2", "statistic"]
    assert len(ax.patches) == 2  # the empty subset is not shaded
    assert len(ax.collections[0].get_segments()) == 2  # nor does its NaN value draw


def test_many_subsets_draw_values_as_a_line():
    x = np.linspace(0, 1, 200)
    r = jaxsubset.ranges.rolling(x, 0.1)
    v = np.arange(200.0)
    ax = jaxsubset.plot_subsets(x, x, r, ax=_ax(), values=v, value_label="mean")
    assert _legend(ax) == ["data", "mean (200 subsets)"]
    assert len(ax.patches) == 0
    np.testing.assert_array_equal(ax.get_lines()[-1].get_ydata(), v)


def test_many_subsets_under_max_shaded_share_one_legend_entry():
    x = np.arange(60.0)
    ax = jaxsubset.plot_subsets(x, x, jaxsubset.ranges.chunks(x, 12), ax=_ax())
    assert _legend(ax) == ["data", "12 subsets"]
    assert len(ax.patches) == 12


def test_figure_is_not_blank(tmp_path):
    import matplotlib.image

    x = np.linspace(0, 10, 500)
    ax = _ax()
    jaxsubset.plot_subsets(x, np.cos(x), jaxsubset.ranges.chunks(x, 3), ax=ax, title="t")
    ax.figure.savefig(tmp_path / "f.png")
    img = matplotlib.image.imread(tmp_path / "f.png")
    assert img.shape[:2] == (300, 600)
    assert img[..., :3].std() > 0.05


def test_default_axes_come_from_pyplot():
    import matplotlib.pyplot as plt

    x = np.arange(5.0)
    ax = jaxsubset.plot_subsets(x, x, jaxsubset.ranges.chunks(x, 2))
    try:
        assert ax.get_legend() is not None
    finally:
        plt.close(ax.figure)


def test_errors():
    x = np.arange(5.0)
    r = jaxsubset.ranges.chunks(x, 2)
    with pytest.raises(TypeError, match="must be jaxsubset.Subsets or jaxsubset.Ranges"):
        jaxsubset.plot_subsets(x, x, [(0, 2)], ax=_ax())
    with pytest.raises(ValueError, match=r"one value per subset \(2\), got 3"):
        jaxsubset.plot_subsets(x, x, r, ax=_ax(), values=[1, 2, 3])
    with pytest.raises(ValueError, match="`y` must have shape"):
        jaxsubset.plot_subsets(x, x[:3], r, ax=_ax())
