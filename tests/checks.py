"""Shared checks for public functions, in the style of jax's ``_CheckAgainstNumpy`` and
``_CompileAndCheck``: the same results eagerly, under ``jit`` and under ``vmap``, one
compilation for many traced values, and per-dtype tolerances (``references.tol``).

    check_against(fn, reference, args)     # fn(*args) == reference(*args)
    compile_and_check(fn, [args1, args2])   # jit(fn) == fn on each; compiled once
    vmap_and_check(fn, batched_args)        # vmap(fn)(batch)[i] == fn(batch[i])
"""

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from compilations import compilations
from references import FLOAT, tol


def _leaves(out: Any) -> list[np.ndarray]:
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(out)]


def assert_trees_close(got: Any, want: Any, err_msg: str = "", **tolerance: float) -> None:
    """Every leaf of ``got`` close to ``want``'s (NaN where NaN), with ``tol()`` by default."""
    tolerance = tolerance or tol()
    g, w = _leaves(got), _leaves(want)
    assert len(g) == len(w), f"{err_msg}: {len(g)} leaves, expected {len(w)}"
    for i, (a, b) in enumerate(zip(g, w, strict=True)):
        np.testing.assert_allclose(a, b, err_msg=f"{err_msg} (leaf {i})", **tolerance)


def check_against(
    fn: Callable, reference: Callable, args: Sequence[Any], **tolerance: float
) -> Any:
    """``fn(*args)`` equals an independent ``reference(*args)`` (NumPy, SciPy, pandas...)."""
    got = fn(*args)
    assert_trees_close(got, reference(*args), "against the reference", **tolerance)
    return got


def compile_and_check(
    fn: Callable, arg_sets: Sequence[Sequence[Any]], *, rtol: float | None = None
) -> None:
    """``jax.jit(fn)`` equals ``fn`` on every argument set, compiling exactly once for them.

    The argument sets must share shapes and dtypes (only traced values change); the eager
    call and the jitted one may round differently, so they are compared to a few ulps.
    """
    jitted = jax.jit(fn)
    eps = np.finfo(FLOAT).eps
    close = dict(rtol=rtol if rtol is not None else 64 * eps, atol=16 * eps)
    jitted(*arg_sets[0])  # compile outside the count
    with compilations() as seen:
        outs = [jitted(*args) for args in arg_sets]
    assert len(seen) == 0, f"recompiled for new traced values: {seen}"
    for args, out in zip(arg_sets, outs, strict=True):
        assert_trees_close(out, fn(*args), "jit against eager", **close)


def vmap_and_check(
    fn: Callable, batched: Sequence[Any], in_axes: Any = 0, *, rtol: float | None = None
) -> None:
    """``jax.vmap(fn)`` over ``batched`` equals ``fn`` on each batch element.

    The batched function runs as one jitted program (an eager ``vmap`` would dispatch every
    batched primitive on its own); each element's reference is the eager call.
    """
    out = jax.jit(jax.vmap(fn, in_axes=in_axes))(*batched)
    axes = in_axes if isinstance(in_axes, tuple | list) else (in_axes,) * len(batched)
    size = next(np.shape(a)[ax] for a, ax in zip(batched, axes, strict=True) if ax is not None)
    eps = np.finfo(FLOAT).eps
    close = dict(rtol=rtol if rtol is not None else 64 * eps, atol=16 * eps)
    for i in range(size):
        one = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(batched, axes, strict=True)
        ]
        want = fn(*one)
        got = jax.tree_util.tree_map(lambda a, i=i: a[i], out)
        assert_trees_close(got, want, f"vmap element {i}", **close)
