"""Your own function on every subset: a straight-line fit per chunk, for several datasets.

Three noisy curves of different lengths are packed into one batch (``pack`` pads them and
returns their true lengths), and one jitted, ``vmap``-ped function cuts each into 8 chunks,
fits a line to every chunk with ``Subsets.apply`` (least squares over the chunk's real
points: the mask hides the padding) and puts the fitted values back onto the points with
``Subsets.scatter``. ``jax.grad`` of the fits' total squared residual with respect to the
data shows the whole pipeline is differentiable.

Run:  python examples/local_fits.py [OUT_DIR]
(with OUT_DIR, it also draws its figure there: OUT_DIR/local_fits.png)
"""

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxsubset


N_CHUNKS = 8


def make_datasets(seed=2):
    rng = np.random.default_rng(seed)
    out = []
    for n, f in ((700, np.sin), (500, np.cos), (900, lambda t: np.sin(2 * t) / 2)):
        x = np.sort(rng.uniform(0.0, 6.0, n))
        out.append((x, f(x) + rng.normal(0.0, 0.1, n)))
    return out


def line_fit(x, y, mask):
    """Least-squares ``(slope, intercept)`` over the real points of one subset."""
    w = mask.astype(y.dtype)
    n = jnp.maximum(w.sum(), 1)
    mx, my = (w * x).sum() / n, (w * y).sum() / n
    slope = (w * (x - mx) * (y - my)).sum() / jnp.maximum((w * (x - mx) ** 2).sum(), 1e-12)
    return slope, my - slope * mx


def fit_one(x, y, n):
    """Fitted values at every point of one (padded) dataset with ``n`` real points."""
    s = jaxsubset.chunks(x, y, N_CHUNKS, length=n)  # 8 chunks of the n real points
    slope, intercept = s.apply(line_fit)  # (8,) each
    fitted = slope[:, None] * s.x + intercept[:, None]  # (8, capacity)
    return s.scatter(fitted, size=x.shape[0])  # back onto the points; NaN on the padding


@jax.jit
def fit_all(x, y, n):
    return jax.vmap(fit_one)(x, y, n)


def loss(y, x, n):
    """The fits' total squared residual over the real points (the padding is left out)."""
    real = jnp.arange(x.shape[1]) < n[:, None]
    residual = jnp.where(real, fit_all(x, y, n) - y, 0.0)
    return jnp.sum(residual**2)


def main(out_dir=None):
    datasets = make_datasets()
    x, y, n = jaxsubset.pack(datasets)  # (3, 900) padded, n = true lengths
    fitted = np.asarray(fit_all(x, y, n))
    grad = np.asarray(jax.grad(loss)(y, x, n))
    print(f"packed {len(datasets)} datasets of lengths {np.asarray(n).tolist()} into {x.shape}")
    for k, (xk, yk) in enumerate(datasets):
        rms = np.sqrt(np.mean((fitted[k, : len(xk)] - yk) ** 2))
        print(f"dataset {k}: rms residual of the {N_CHUNKS} line fits {rms:.3f}")
    padding = np.arange(x.shape[1]) >= np.asarray(n)[:, None]
    print(
        f"gradient w.r.t. the data {grad.shape}: finite {bool(np.isfinite(grad).all())}, "
        f"zero on the padding {bool((grad[padding] == 0).all())}"
    )
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        figure(datasets, fitted, os.path.join(out_dir, "local_fits.png"))


def figure(datasets, fitted, path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for k, (xk, yk) in enumerate(datasets):
        shift = 2.5 * k
        ax.plot(xk, yk + shift, ".", ms=2, color="0.6", label="data" if k == 0 else None)
        bounds = np.array_split(np.arange(len(xk)), N_CHUNKS)
        for j, piece in enumerate(bounds):
            ax.plot(
                xk[piece],
                fitted[k, piece] + shift,
                color=f"C{k}",
                lw=2,
                label=f"dataset {k}: fits" if j == 0 else None,
            )
    ax.set_xlabel("x")
    ax.set_ylabel("y (datasets shifted by 2.5)")
    ax.set_title("chunks(...).apply(line_fit), vmap over pack(datasets)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
