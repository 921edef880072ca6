"""``searchsorted`` in key space, with its algorithms named (as ``jnp.searchsorted(method=)``).

:func:`searchsorted_keys` picks one of three exact algorithms; all make the same comparison
(:func:`jaxsubset.resolve._keys.keys` of x against a bound's key), so they give the same answer:

- ``"probe"``: a fixed-trip binary search that converts only the probed points of ``x`` to
  keys: O(K log N), no pass over ``x``. Used for few bounds (``K log2 N < N``) on float ``x``.
- ``"keys"``: ``jnp.searchsorted(keys(x), key)`` (its own default method): one elementwise pass
  over ``x``, then a parallel bisection. Used for many bounds, and always on integer ``x``.
- ``"guided"`` (:func:`sorted_search`): for SORTED bounds (one window per point) on the CPU,
  at least ``GUIDED_MIN`` of them: every ``ANCHOR``-th bound searched in full, the others
  guessed by interpolation between their anchors' answers and VERIFIED, only failed guesses
  bisected. Fewer bounds take ``"keys"``: its program compiles in about a third of the time.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core import (
    Array,
    backend,
    index_dtype,
)
from ._keys import Key, keys, unkeys


ANCHOR = 64  # sorted queries per exactly searched anchor

# traced windows over fewer points search their bounds with the plain search too: below this
# many bounds the guided search's larger program (its cond, while loop and interpolation)
# costs more compile time than its run time saves (see BENCHMARKS.md, the suite's time)
GUIDED_MIN = 1 << 16


# eager windows over fewer points search their bounds with the plain search: the guided one
# compiles into a larger program (see BENCHMARKS.md, issue 14) for a run-time gain that a
# few calls of this size do not repay
GUIDED_EAGER = 1 << 21


def sorted_search(xk: Array, key: Array, side: str, dtype: Any) -> Array:
    """``searchsorted(xk, key, side)`` for SORTED ``key`` (one window per point): exact.

    Every ``ANCHOR``-th query (and the last) is searched in full; the answer of a query in
    between lies between its two anchors' answers (both arrays are sorted). It is guessed by
    interpolating the query between the keys at those answers, then VERIFIED with two
    comparisons; only queries whose guess fails are bisected between the bounds the check
    leaves (a loop that does not run when every guess holds, as on evenly spaced x). The
    interpolation is only a hint: the answer is the exact comparison's, for any sorted ``xk``.
    """
    n, q = xk.shape[0], key.shape[0]
    idt = index_dtype()
    m = -(-q // ANCHOR)
    qpos = np.minimum(np.arange(m + 1) * ANCHOR, q - 1)
    anchors = jnp.searchsorted(xk, key[qpos], side=side).astype(idt)
    kp = jnp.pad(key, (0, m * ANCHOR - q), mode="edge").reshape(m, ANCHOR)

    def below(i: Array) -> Array:  # xk[i] <= key ("right") / xk[i] < key ("left"): answer > i
        xi = xk[jnp.clip(i, 0, n - 1)]
        return (xi <= kp) if side == "right" else (xi < kp)

    # the anchors' answers bracket a query's answer; each side is checked (so a bound that is
    # out of order, e.g. a clipped one, costs a longer search, never a wrong answer)
    lo = anchors[:-1, None]
    hi = jnp.maximum(anchors[1:, None], lo)
    lo = jnp.where((lo == 0) | below(lo - 1), lo, 0)
    hi = jnp.where((hi == n) | ~below(hi), hi, n)

    # interpolated in value space (keys of floats are not linear across binades)
    fdt = jnp.result_type(float)  # a hint only: values far apart may round

    def value(k: Array) -> Array:
        return unkeys(k, dtype).astype(fdt)

    v_lo = value(xk[jnp.clip(lo, 0, n - 1)])
    d = value(kp) - v_lo
    span = value(xk[jnp.clip(hi - 1, 0, n - 1)]) - v_lo
    cnt = (hi - 1 - lo).astype(fdt)
    good = (span > 0) & (cnt > 0) & jnp.isfinite(d) & jnp.isfinite(span)
    r = jnp.where(good, jnp.clip(d * cnt / jnp.where(good, span, 1), 0, cnt + 1), 0)
    if side == "right":
        g = lo + jnp.where(d >= 0, jnp.floor(r).astype(idt) + 1, 0)
    else:
        g = lo + jnp.where(d > 0, jnp.ceil(r).astype(idt), 0)
    g = jnp.clip(g, lo, hi)
    left_ok = (g == lo) | below(g - 1)
    right_ok = (g == hi) | ~below(g)
    ok = left_ok & right_ok

    def fix() -> Array:
        # a failed guess is most often off by one (an interpolation across jittered points):
        # one probe beside it settles those, so the bisection below usually has nothing left
        # to do (a while loop over every query, one pass per step, otherwise)
        up = left_ok  # (and not right_ok): the answer lies above g, else below it
        g1 = jnp.where(up, g + 1, g - 1)
        hit = jnp.where(up, (g1 == hi) | ~below(g1), (g1 == lo) | below(g1 - 1))
        one = ok | hit
        b_lo = jnp.where(one, jnp.where(ok, g, g1), jnp.where(up, g + 2, lo))
        b_hi = jnp.where(one, jnp.where(ok, g, g1), jnp.where(up, hi, g - 2))

        def step(state: tuple[Array, Array]) -> tuple[Array, Array]:
            a, b = state
            mid = a + (b - a) // 2
            go = below(mid) & (a < b)
            return jnp.where(go, mid + 1, a), jnp.where(go | (a >= b), b, mid)

        out, _ = jax.lax.while_loop(lambda st: jnp.any(st[0] < st[1]), step, (b_lo, b_hi))
        return out

    g = jax.lax.cond(jnp.all(ok), lambda: g, fix)
    return g.reshape(-1)[:q]


def searchsorted_keys(x: Array, key: Array, side: str, sorted_keys: bool = False) -> Array:
    """``searchsorted(x, v, side)`` with ``v`` given as its key: a binary search in key space.

    Few bounds (``K log2 N < N``): only the probed points of ``x`` are converted to keys, so a
    search costs O(log N) per bound and no pass over ``x``. Many bounds (one window per
    point): the keys of ``x`` once (one elementwise pass) and ``jnp.searchsorted`` on them,
    which is cheaper than converting at every probe. Both are the same exact comparison.
    """
    idt = index_dtype()
    n = x.shape[0]
    lo = jnp.zeros(key.shape, idt)
    hi = jnp.full(key.shape, n, idt)
    if n == 0:
        return lo
    if np.dtype(x.dtype).kind != "f" or key.size * int(n).bit_length() >= n:
        # many sorted queries on the CPU: anchors and verified guesses (its cond/while_loop
        # are cheap there); elsewhere jnp.searchsorted's fixed-trip parallel bisection
        guided = key.size > 2 * ANCHOR and key.size >= GUIDED_MIN
        if sorted_keys and key.ndim == 1 and guided and backend() == "cpu":
            return sorted_search(keys(x), key, side, x.dtype)
        return jnp.searchsorted(keys(x), key, side=side).astype(idt)

    def body(_: Any, carry: tuple[Array, Array]) -> tuple[Array, Array]:
        lo, hi = carry
        active = lo < hi
        mid = lo + (hi - lo) // 2
        k = keys(x[jnp.minimum(mid, n - 1)])
        go = (k < key) if side == "left" else (k <= key)
        return jnp.where(active & go, mid + 1, lo), jnp.where(active & ~go, mid, hi)

    lo, _ = jax.lax.fori_loop(0, int(n).bit_length(), body, (lo, hi))
    return lo


def count_keys(x: Array, bound: Key, side: str, n_real: Array, sorted_keys: bool = False) -> Array:
    """``#{x < v}`` (side "left") or ``#{x <= v}`` ("right") among the first ``n_real`` points.

    ``sorted_keys``: the bounds are known to be sorted (one window per point of sorted x).
    """
    key, below, above = bound
    i = jnp.minimum(searchsorted_keys(x, key, side, sorted_keys), n_real)
    if above is not None:
        i = jnp.where(jnp.asarray(above), n_real, i)
    if below is not None:
        i = jnp.where(jnp.asarray(below), 0, i)
    return i
