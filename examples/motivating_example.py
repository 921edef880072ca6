"""The motivating example: one jitted master function, five subsets, one compilation.

x = linspace(0, 10, 1000), y = sin(2*pi*x). The master function isolates each subset from its
index bounds (snapped to the grid with ``nearest``, the exact form of the ``isclose`` idiom) and
computes statistics; the bounds are traced, so all five subsets share one compilation. The
results equal NumPy slicing exactly.

Run:  python examples/motivating_example.py [OUT_DIR]
(with OUT_DIR, it also draws its figure there: OUT_DIR/motivating_example.png)
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxsubset


N_POINTS = 1000
N_SUBSETS = 5
TRACES = []


def make_data(n_points=N_POINTS):
    x = jnp.linspace(0.0, 10.0, n_points)
    return x, jnp.sin(2 * jnp.pi * x)


@jax.jit
def master(x, y, x_lo, x_hi):
    """Isolate the points between the grid values nearest to x_lo and x_hi; their statistics."""
    TRACES.append(1)  # runs once per compilation, not per call
    i0 = jaxsubset.nearest(x, x_lo)
    i1 = jaxsubset.nearest(x, x_hi) + 1
    s = jaxsubset.isolate(x, y, i0, i1, capacity=N_POINTS // N_SUBSETS)
    s = jaxsubset.check_overflow(s)
    stats = {"mean": s.mean(), "std": s.std(), "min": s.min(), "max": s.max()}
    return s, stats


def run(n_points=N_POINTS, n_subsets=N_SUBSETS):
    """Return per-subset results of the jitted master function and the index bounds used."""
    x, y = make_data(n_points)
    bounds = np.array_split(np.arange(n_points), n_subsets)
    results = []
    for idx in bounds:
        subset, stats = master(x, y, x[idx[0]], x[idx[-1]])
        results.append((subset, {k: float(v) for k, v in stats.items()}))
    return x, y, bounds, results


def figure(x, y, bounds, results, path):
    """The data, the subsets in colour and their means (``plot_subsets``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ranges = jaxsubset.Ranges(
        jnp.array([idx[0] for idx in bounds]), jnp.array([len(idx) for idx in bounds])
    )
    means = [r["mean"] for _, r in results]
    jaxsubset.plot_subsets(
        x,
        y,
        ranges,
        ax=fig.add_subplot(),
        values=means,
        value_label="mean",
        ylabel="y = sin(2 pi x)",
        title="one jitted function, five subsets",
    )
    fig.tight_layout()
    fig.savefig(path)


def main(out_dir=None):
    x, y, bounds, results = run()
    print(
        f"{'subset':>6} {'x range':>17} {'count':>5} {'mean':>10} {'std':>8} {'min':>8} {'max':>8}"
    )
    for k, (idx, (subset, r)) in enumerate(zip(bounds, results, strict=True)):
        print(
            f"{k:>6} [{float(x[idx[0]]):6.3f}, {float(x[idx[-1]]):6.3f}] {int(subset.count):>5} "
            f"{r['mean']:>10.3g} {r['std']:>8.4f} {r['min']:>8.4f} {r['max']:>8.4f}"
        )
    print(f"compilations of the master function: {len(TRACES)}")
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        figure(x, y, bounds, results, os.path.join(out_dir, "motivating_example.png"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
