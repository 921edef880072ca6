"""An inclusive scan under an associative merge, in blocks: a program that compiles fast.

``lax.associative_scan`` applies the merge about ``2 log2(N)`` times in its program (one per
level of its tree, up and down); a merge of dozens of operations then compiles for seconds
at a few thousand points and its derivative (the transpose of every level) for tens of
seconds. :func:`blocked_scan` cuts the sequence into rows of ``block`` elements and scans
them in ``ceil(log_block(N))`` levels, each one ``lax.scan`` of ``block`` steps over all the
rows at once (one merge in its body) for the rows' totals, then, once the totals are scanned
the same way, a second ``lax.scan`` merging each row's elements onto the prefix before the
row. The program holds two merges per level (about 8 at 1e7 points with ``block = 64``), its
derivative the transposes of those: a fraction of the compile time.

Trade-offs (measured in BENCHMARKS.md): the same O(N) work; a depth of ``block`` steps per
level (about 256 sequential steps at 1e7 points, each over ``N / 64`` elements at once)
instead of ``2 log2(N)`` levels, so a GPU runs more, smaller kernels; every result merges
its row's elements one at a time onto the prefix of the rows before (as a serial pass), so
floating-point results differ from a tree's in the last bits.
"""

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
from jax import lax, vmap
from jax.tree_util import tree_leaves, tree_map


BLOCK = 64


def _rows(fn: Callable[[Any, Any], Any], first: Any, elems: Any) -> Any:
    """Every prefix ``first, fn(first, e0), fn(fn(first, e0), e1), ...`` but the first, of the
    elements along axis 0 (``lax.scan``: one merge in its body)."""

    def step(carry: Any, e: Any) -> tuple[Any, Any]:
        merged = fn(carry, e)
        return merged, merged

    return lax.scan(step, first, elems)[1]


def blocked_scan(
    fn: Callable[[Any, Any], Any], elems: Any, pad: Any, axis: int = 0, block: int = BLOCK
) -> Any:
    """The inclusive scan of ``elems`` along ``axis`` under the associative merge ``fn``.

    Every result merges one element at a time onto a prefix (as a serial pass does): the
    elements of a row onto the prefix of the rows before it, which merges whole rows. A
    merge whose precision depends on the sizes of its two sides (the exponentially weighted
    moments after a gap of thousands of halflives) then rounds as in a serial pass wherever
    a prefix holds the gap.

    Args:
        fn: ``fn(a, b)`` the merge of two single elements (``a``'s points before ``b``'s),
            the leaves without the scanned axis; applied to many at once by ``jax.vmap``.
        elems: a pytree of arrays sharing the length ``N`` of ``axis``.
        pad: the identity element (the leaves without the scanned axis): ``fn(pad, e)`` is
            ``e`` for every element ``e``; it starts the first row and fills the last.
        axis: the scanned axis of every leaf.
        block: the row length (the steps of each level's ``lax.scan``).

    Returns:
        the pytree of prefixes, shaped as ``elems``: element ``i`` merges elements
        ``0..i`` in order.

    Example:
        >>> import jax.numpy as jnp
        >>> ones = jnp.ones(5, jnp.float32)
        >>> blocked_scan(lambda a, b: a + b, ones, jnp.float32(0), block=2).tolist()
        [1.0, 2.0, 3.0, 4.0, 5.0]
    """
    moved = tree_map(lambda a: jnp.moveaxis(a, axis, 0), elems)
    n = tree_leaves(moved)[0].shape[0]
    out = _scan(fn, moved, pad, block) if n else moved
    return tree_map(lambda a: jnp.moveaxis(a, 0, axis), out)


def _scan(fn: Callable[[Any, Any], Any], elems: Any, pad: Any, block: int) -> Any:
    n = tree_leaves(elems)[0].shape[0]
    if n <= block:
        return _rows(fn, pad, elems)
    rows = -(-n // block)
    fill = rows * block - n

    def to_rows(a: Any, p: Any) -> Any:  # (block, rows, ...): step j of every row at once
        if fill:
            p = jnp.broadcast_to(jnp.asarray(p, a.dtype), (fill, *a.shape[1:]))
            a = jnp.concatenate([a, p])
        return jnp.moveaxis(a.reshape(rows, block, *a.shape[1:]), 0, 1)

    blocks = tree_map(to_rows, elems, pad)
    every = vmap(fn)
    first = tree_map(lambda a: a[0], blocks)
    totals = lax.scan(lambda c, e: (every(c, e), None), first, tree_map(lambda a: a[1:], blocks))[
        0
    ]  # each row merged, in order
    upto = _scan(fn, totals, pad, block)  # the rows' prefixes
    before = tree_map(  # the prefix before each row: the identity before the first
        lambda p, u: jnp.concatenate([jnp.asarray(p, u.dtype)[None], u[:-1]]), pad, upto
    )
    out = _rows(every, before, blocks)
    return tree_map(lambda a: jnp.moveaxis(a, 0, 1).reshape(rows * block, *a.shape[2:])[:n], out)
