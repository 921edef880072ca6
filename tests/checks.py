"""Shared checks for public functions, in the style of jax's ``_CheckAgainstNumpy`` and
``_CompileAndCheck``: the same results eagerly, under ``jit`` and under ``vmap``, one
compilation for many traced values, and per-dtype tolerances (``references.tol``).

    check_against(fn, reference, args)     # fn(*args) == reference(*args)
    compile_once(fn, [args1, args2])        # jit(fn)'s outputs; compiled once for all
    compile_and_check(fn, [args1, args2])   # jit(fn) == fn on each; compiled once
    vmap_and_check(fn, batched_args)        # vmap(fn)(batch)[i] == fn(batch[i])

Eager and jitted (or batched) runs may round differently: they are compared to a few ulps of
the mode's float (``rtol``/``atol`` override, for statistics of a larger error scale).
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


def _ulps(rtol: float | None, atol: float | None) -> dict[str, float]:
    eps = float(np.finfo(FLOAT).eps)
    return dict(rtol=64 * eps if rtol is None else rtol, atol=16 * eps if atol is None else atol)


def compile_once(fn: Callable, arg_sets: Sequence[Sequence[Any]]) -> list[Any]:
    """The outputs of ``jax.jit(fn)`` on every argument set, asserting one compilation.

    The argument sets must share shapes and dtypes (only traced values change); the first
    call compiles, the others must compile nothing (JAX's own compilation events, see
    ``compilations``). A jitted ``fn`` is called as it is (wrapping it in another ``jit``
    would compile a second program, beside the one its direct calls use).
    """
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    outs = [jitted(*arg_sets[0])]  # compile outside the count
    with compilations() as seen:
        outs += [jitted(*args) for args in arg_sets[1:]]
    assert len(seen) == 0, f"recompiled for new traced values: {seen}"
    return outs


def compile_and_check(
    fn: Callable,
    arg_sets: Sequence[Sequence[Any]],
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """``jax.jit(fn)`` equals ``fn`` on every argument set, compiling exactly once for them
    (:func:`compile_once`); eager and jitted runs are compared to a few ulps."""
    outs = compile_once(fn, arg_sets)
    for args, out in zip(arg_sets, outs, strict=True):
        assert_trees_close(out, fn(*args), "jit against eager", **_ulps(rtol, atol))


def vmap_and_check(
    fn: Callable,
    batched: Sequence[Any],
    in_axes: Any = 0,
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """``jax.vmap(fn)`` over ``batched`` equals ``fn`` on each batch element.

    The batched function runs as one jitted program (an eager ``vmap`` would dispatch every
    batched primitive on its own); each element's reference is the eager call.
    """
    out = jax.jit(jax.vmap(fn, in_axes=in_axes))(*batched)
    axes = in_axes if isinstance(in_axes, tuple | list) else (in_axes,) * len(batched)
    size = next(np.shape(a)[ax] for a, ax in zip(batched, axes, strict=True) if ax is not None)
    close = _ulps(rtol, atol)
    for i in range(size):
        one = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(batched, axes, strict=True)
        ]
        want = fn(*one)
        got = jax.tree_util.tree_map(lambda a, i=i: a[i], out)
        assert_trees_close(got, want, f"vmap element {i}", **close)
