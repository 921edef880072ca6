"""Many datasets of different lengths packed into one padded batch for ``vmap``."""

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ._core import ArrayLike, as_xy, check_sorted_x, index_dtype, static_int


def pack(
    datasets: Sequence[tuple[ArrayLike, ArrayLike]], *, length: int | None = None
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Pack ``(x, y)`` datasets of different lengths into one padded batch.

    One compiled function then serves every dataset: ``vmap`` over the batch and pass each
    dataset's ``length`` to the constructors, which never select a padded point. ``x`` is padded
    with its largest possible value (``+inf`` for floats), so it stays sorted, and ``y`` with 0.

    Args:
        datasets: ``D`` pairs ``(x_d, y_d)`` with ``x_d`` of shape ``(N_d,)`` and ``y_d`` of
            shape ``(N_d, *channels)``; the channels and dtypes must agree.
        length: static padded length; default the longest dataset. Choosing a fixed (or
            power-of-two) length lets batches of other datasets reuse the compiled function.

    Returns:
        ``(x, y, lengths)`` of shapes ``(D, length)``, ``(D, length, *channels)``, ``(D,)``.

    Example:
        >>> import jax, jax.numpy as jnp, jaxsubset
        >>> a = (jnp.arange(3.0), jnp.ones(3))
        >>> b = (jnp.arange(5.0), jnp.ones(5))
        >>> x, y, n = jaxsubset.pack([a, b])
        >>> x.shape, n.tolist()
        ((2, 5), [3, 5])
        >>> f = jax.vmap(lambda x, y, n: jaxsubset.chunks(x, y, 2, length=n).count)
        >>> f(x, y, n).tolist()
        [[2, 1], [3, 2]]
    """
    func = "pack"
    if len(datasets) == 0:
        raise ValueError(f"{func}: `datasets` must hold at least one (x, y) pair, got none")
    pairs = []
    for d, pair in enumerate(datasets):
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"{func}: dataset {d} must be an (x, y) pair")
        x, y = as_xy(pair[0], pair[1], f"{func}: dataset {d}")
        check_sorted_x(x, f"{func}: dataset {d}")
        pairs.append((np.asarray(x), np.asarray(y)))
    x_dtype = np.result_type(*(p[0].dtype for p in pairs))
    y_dtype = np.result_type(*(p[1].dtype for p in pairs))
    channels = {p[1].shape[1:] for p in pairs}
    if len(channels) != 1:
        raise ValueError(f"{func}: every `y` must have the same channel shape, got {channels}")
    longest = max(p[0].shape[0] for p in pairs)
    if length is None:
        length = longest
    length = static_int(length, "length", func, minimum=0)
    if length < longest:
        raise ValueError(
            f"{func}: `length` must be >= the longest dataset ({longest}), got {length}"
        )
    pad_x = np.inf if x_dtype.kind == "f" else np.iinfo(x_dtype).max
    (ch,) = channels
    xs = np.full((len(pairs), length), pad_x, dtype=x_dtype)
    ys = np.zeros((len(pairs), length) + ch, dtype=y_dtype)
    for d, (px, py) in enumerate(pairs):
        xs[d, : px.shape[0]] = px
        ys[d, : px.shape[0]] = py
    lengths = np.array([p[0].shape[0] for p in pairs])
    return jnp.asarray(xs), jnp.asarray(ys), jnp.asarray(lengths, index_dtype())
