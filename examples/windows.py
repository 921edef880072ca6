"""Windows on irregularly sampled data: x-width rolling windows, and hopping windows.

A noisy signal sampled at irregular positions, with a few spikes. ``rolling_statistic``
computes pandas' offset windows (the points with ``a - width < x <= a`` at every point
``a``): the rolling median shrugs off the spikes that pull the rolling mean. ``dynamic``
cuts hopping windows (polars' ``group_by_dynamic``: ``[s, s + period)`` every ``every``),
here 2 units long every unit, and a jitted function takes each window's maximum and the
index of the point where it lies, in the original arrays.

Run:  python examples/windows.py [OUT_DIR]
(with OUT_DIR, it also draws its figure there: OUT_DIR/windows.png)
"""

import functools
import os
import sys

import jax
import numpy as np

import jaxsubset


def make_data(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 20.0, n))  # irregular spacing
    y = np.sin(x) + 0.3 * np.sin(5.3 * x) + rng.normal(0.0, 0.15, n)
    spikes = rng.choice(n, 60, replace=False)
    y[spikes] += rng.choice([-1.0, 1.0], 60) * rng.uniform(3.0, 6.0, 60)
    return x, y


@functools.partial(jax.jit, static_argnames="num_windows")
def window_peaks(x, y, num_windows):
    """The maximum of every hopping window and where it lies (one compiled program; the
    number of windows sets a shape, so it is static)."""
    s = jaxsubset.dynamic(x, y, 1.0, period=2.0, capacity=512, num_windows=num_windows)
    s = jaxsubset.check_overflow(s)  # a clear error if 512 points are too few for a window
    return s.max(nan_policy="omit"), s.argmax(nan_policy="omit"), s.count


def main(out_dir=None):
    x, y = make_data()
    stats = jaxsubset.rolling_statistic(x, y, 0.3, ("mean", "median"), center=True)
    lo, hi = jaxsubset.dynamic_bounds(x, 1.0, period=2.0)  # the windows' x bounds (NumPy)
    peak, where, count = (np.asarray(a) for a in window_peaks(x, y, num_windows=lo.size))
    print(f"{x.size} points on [0, 20), {lo.size} hopping windows of 2 every 1")
    print(f"points per window: {count.min()} to {count.max()}")
    for k in (0, 1, lo.size - 1):
        print(f"window [{lo[k]:4.1f}, {hi[k]:4.1f}): max {peak[k]:6.3f} at x = {x[where[k]]:.3f}")
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        figure(x, y, stats, (lo, hi, peak, where), os.path.join(out_dir, "windows.png"))


def figure(x, y, stats, peaks, path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lo, hi, peak, where = peaks
    fig = Figure(figsize=(8, 5.5), dpi=100)
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(x, y, ".", ms=2, color="0.55", label="data")
    top.plot(x, stats["mean"], color="C1", lw=1.5, label="rolling mean")
    top.plot(x, stats["median"], color="C0", lw=1.5, label="rolling median")
    top.set_ylim(-2.2, 2.2)  # the spikes reach past it: the lines are what matters here
    top.set_title("rolling_statistic(x, y, 0.3, ('mean', 'median'), center=True)")
    bottom.plot(x, y, "-", lw=0.6, color="0.55", label="data")
    bottom.hlines(peak, lo, hi, color="C3", lw=1.0, label="max per window")
    bottom.plot(x[where], peak, "v", color="C3", ms=5, label="where it lies")
    bottom.set_title("dynamic(x, y, 1.0, period=2.0): max and argmax of each window")
    bottom.set_xlabel("x")
    for ax in (top, bottom):
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
