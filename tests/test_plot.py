"""``jaxsubset.plot_subsets``: what it draws, on a bare Agg figure (no pyplot state)."""

import numpy as np
import pytest

import jaxsubset
from references import needs_x64


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


def test_gaps_show_as_gaps():
    """No line across a missing stretch: NaN readings break it, and so does a step in x wider
    than 5x the median spacing (a NaN point inserted there); duplicates do not count as spacing."""
    x = np.r_[np.arange(10.0), 10.0, np.arange(40.0, 50.0)]  # a duplicate x and a gap 10 -> 40
    y = np.cos(x)
    y[3] = np.nan
    r = jaxsubset.ranges.chunks(x, 3)  # [0..6], [7, 8, 9, 10, 40, 41, 42], [43..49]
    ax = jaxsubset.plot_subsets(x, y, r, ax=_ax())
    data = ax.get_lines()[0]
    xs, ys = np.asarray(data.get_xdata()), np.asarray(data.get_ydata())
    assert len(xs) == len(x) + 1  # one break inserted
    assert np.isnan(ys[3])  # the missing reading
    (k,) = np.flatnonzero(np.isnan(ys) & ~np.isin(xs, x))
    assert xs[k] == 25.0 and xs[k - 1] == 10.0 and xs[k + 1] == 40.0
    # the subset holding the gap breaks there too; the last one is drawn as it is
    second, third = ax.get_lines()[2:4]
    assert np.isnan(np.asarray(second.get_ydata())).sum() == 1 and len(second.get_xdata()) == 8
    np.testing.assert_array_equal(third.get_xdata(), x[14:])
    # gap_factor=None: only the NaN readings break the line
    ax = jaxsubset.plot_subsets(x, y, r, ax=_ax(), gap_factor=None)
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), x)


@needs_x64  # a time axis is int64 nanoseconds
def test_time_axis_and_the_values_line_break_at_gaps():
    t = np.r_[
        np.arange("2001-01-01", "2001-03-01", dtype="datetime64[D]"),
        np.arange("2005-01-01", "2005-02-01", dtype="datetime64[D]"),
    ].astype("datetime64[ns]")
    y = np.sin(np.arange(len(t)) / 5.0)
    r = jaxsubset.ranges.rolling(jaxsubset.to_ns(t), jaxsubset.to_ns("7D"))
    ax = jaxsubset.plot_subsets(t, y, r, ax=_ax(), values=y, value_label="mean")
    data, line = ax.get_lines()[0], ax.get_lines()[1]
    for ln in (data, line):
        xs, ys = np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata(), float)
        assert xs.dtype.kind == "M"
        (k,) = np.flatnonzero(np.isnan(ys))
        assert t[58] < xs[k] < t[59]  # between 2001-02-28 and 2005-01-01
