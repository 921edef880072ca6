"""``jaxsubset demo``: the motivating example on embedded data, with a table and figures.

``x = linspace(0, 10, N)``, ``y = sin(2 pi x)``, cut into K subsets by index bounds. ONE jitted
master function isolates a subset from its (traced) bounds with a static capacity and computes
its statistics, so all K subsets share a single compilation; the demo counts the traces to show
it, times the calls after compilation, checks the results against NumPy slicing and draws the
figures of the original analysis.
"""

import os
import tempfile
import time
from typing import Any, TextIO

import jax
import jax.numpy as jnp
import numpy as np

import jaxsubset

from ._figures import DPI, FIGSIZE, new_figure, require_matplotlib, save_figure
from ._files import InputError, check_memory
from ._writer import format_table


MAX_SUBSETS = 100  # one figure each
BYTES_PER_POINT = 128  # x, y, the subsets' padded copies and the plotted lines, with margin


def subset_bounds(n_points: int, n_subsets: int) -> tuple[np.ndarray, np.ndarray]:
    """Index bounds ``[start, stop)`` of ``n_subsets`` ``numpy.array_split`` pieces."""
    q, r = divmod(n_points, n_subsets)
    i = np.arange(n_subsets)
    start = i * q + np.minimum(i, r)
    return start, start + q + (i < r)


def mode_note(dtype: Any) -> str:
    """What the demo computes in: the command runs in JAX's 64-bit mode and hands the caller's
    own setting back when it returns (``jaxsubset.cli.main``), which the demo says."""
    if np.dtype(dtype) == np.float64:
        return (
            "float64: JAX's 64-bit mode is on for this run only "
            "(a Python caller of jaxsubset.cli.main keeps its own setting)"
        )
    return f"{np.dtype(dtype)}: JAX's default 32-bit mode"


def make_master(capacity: int) -> tuple[Any, list[int]]:
    """The jitted master function ``(x, y, start, stop) -> dict`` and its trace counter."""
    traces = [0]

    def master(x, y, start, stop):
        traces[0] += 1  # runs only while tracing, i.e. once per compilation
        s = jaxsubset.isolate(x, y, start, stop, capacity=capacity)
        return {
            "x": s.x,
            "y": s.y,
            "mask": s.mask,
            "count": s.count,
            "x_first": s.x[0],
            "x_last": jnp.max(jnp.where(s.mask, s.x, -jnp.inf)),
            "mean": s.mean(),
            "std": s.std(),
            "min": s.min(),
            "max": s.max(),
        }

    return jax.jit(master), traces


def run_demo(out_dir: str, n_points: int, n_subsets: int, *, stdout: TextIO, quiet: bool) -> int:
    """Run the demo; print the table and facts to ``stdout``, write the PNGs into ``out_dir``."""
    if n_points < 2:
        raise InputError(f"--n-points must be at least 2, got {n_points}")
    if not 1 <= n_subsets <= min(n_points, MAX_SUBSETS):
        raise InputError(
            f"--n-subsets must be between 1 and {min(n_points, MAX_SUBSETS)} "
            f"(one figure each, at least one point each), got {n_subsets}"
        )
    # x, y and the padded subsets on the device, the figures' copies on the host.
    check_memory(n_points * BYTES_PER_POINT, f"--n-points {n_points}")
    require_matplotlib("the demo's figures")
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise InputError(f"--out {out_dir}: exists and is not a folder")
    try:
        os.makedirs(out_dir, exist_ok=True)
        # Writable, tried for real before any computing (root ignores the mode bits).
        fd, probe = tempfile.mkstemp(prefix=".probe.", dir=out_dir)
        os.close(fd)
        os.remove(probe)
    except OSError as e:
        why = e.strerror or e
        raise InputError(f"--out {out_dir}: cannot write figures there: {why}") from None

    def say(msg: str = "") -> None:
        if not quiet:
            print(msg, file=stdout)

    x = jnp.linspace(0.0, 10.0, n_points)
    y = jnp.sin(2 * jnp.pi * x)
    start, stop = subset_bounds(n_points, n_subsets)
    capacity = jaxsubset.required_capacity(stop - start)
    master, traces = make_master(capacity)

    # First pass: compiles once (bounds are traced), then every subset reuses it.
    t0 = time.perf_counter()
    bounds = list(zip(start.tolist(), stop.tolist(), strict=True))
    results = [jax.block_until_ready(master(x, y, a, b)) for a, b in bounds]
    first_pass = time.perf_counter() - t0
    # Timed passes after compilation.
    reps = max(1, 200 // n_subsets)
    t0 = time.perf_counter()
    for _ in range(reps):
        for a, b in zip(start, stop, strict=True):
            jax.block_until_ready(master(x, y, int(a), int(b)))
    per_subset = (time.perf_counter() - t0) / (reps * n_subsets)

    res = {k: np.array([np.asarray(r[k]) for r in results]) for k in results[0]}
    x_np, y_np = np.asarray(x), np.asarray(y)
    # Independent check against NumPy slicing.
    worst = 0.0
    for k, (a, b) in enumerate(zip(start, stop, strict=True)):
        ref = y_np[a:b]
        for name, fn in (("mean", np.mean), ("std", np.std), ("min", np.min), ("max", np.max)):
            worst = max(worst, abs(float(res[name][k]) - float(fn(ref))))
    x_range = [
        f"{lo:.4f} .. {hi:.4f}" for lo, hi in zip(res["x_first"], res["x_last"], strict=True)
    ]
    say(
        f"{n_subsets} subsets of x = linspace(0, 10, {n_points}), y = sin(2 pi x), "
        f"capacity {capacity}"
    )
    say(mode_note(x.dtype))
    say()
    table = {
        "subset": np.arange(n_subsets),
        "x range": np.array(x_range),
        "count": res["count"],
        "mean": res["mean"],
        "std": res["std"],
        "min": res["min"],
        "max": res["max"],
    }
    say(format_table(table))
    say()
    say(
        f"compilations: {traces[0]} (one trace of the jitted master function serves all "
        f"{n_subsets} subsets: the bounds are traced, the capacity is static)"
    )
    say(
        f"time per subset after compilation: {per_subset * 1e3:.3f} ms "
        f"(first pass with compilation: {first_pass:.2f} s)"
    )
    say(f"largest difference from NumPy slicing (mean/std/min/max): {worst:.3g}")

    # Figures: one per subset, one overview.
    names = []
    for k, (a, b) in enumerate(zip(start, stop, strict=True)):
        fig, ax = new_figure()
        colour = f"C{k % 10}"
        ax.plot(x_np, y_np, "--", color="black", lw=1.0, zorder=2.5, label="data")
        ax.axvspan(x_np[a], x_np[b - 1], color=colour, alpha=0.12, lw=0)
        ax.plot(x_np[a:b], y_np[a:b], "-", color=colour, lw=3.0, label=f"subset {k} ({b - a} pts)")
        ax.hlines(
            res["mean"][k],
            x_np[a],
            x_np[b - 1],
            colors=colour,
            linestyles=":",
            lw=2.0,
            label=f"mean {res['mean'][k]:.3g}\nstd {res['std'][k]:.3g}",
        )
        ax.set_xlabel("x")
        ax.set_ylabel("y = sin(2 pi x)")
        ax.set_title(f"subset {k}: x in [{x_np[a]:.3f}, {x_np[b - 1]:.3f}]")
        # outside the axes, so it never hides the data (the subset may lie anywhere)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")
        fig.tight_layout()
        name = f"subset_{k}.png"
        save_figure(fig, os.path.join(out_dir, name))
        names.append(name)
    fig, ax = new_figure()
    jaxsubset.plot_subsets(
        x_np,
        y_np,
        jaxsubset.Ranges(jnp.asarray(start), jnp.asarray(stop - start)),
        ax=ax,
        values=res["mean"],
        value_label="mean",
        ylabel="y = sin(2 pi x)",
        title=f"{n_subsets} subsets and their means",
    )
    fig.tight_layout()
    save_figure(fig, os.path.join(out_dir, "overview.png"))
    names.append("overview.png")
    w, h = int(FIGSIZE[0] * DPI), int(FIGSIZE[1] * DPI)
    say(f"wrote {len(names)} figures ({w} x {h} px) to {out_dir}/: {', '.join(names)}")
    return 0
