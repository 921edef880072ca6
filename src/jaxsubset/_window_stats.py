"""Statistics over fixed-count windows: the last ``window`` points up to each row (pandas'
``Series.rolling(w)``), beside :func:`jaxsubset.rolling_statistic`'s x-width windows (as
polars' ``rolling_mean`` beside ``rolling_mean_by``)."""

from collections.abc import Sequence

from ._core import Array, ArrayLike, check_nan_policy, static_int
from ._rolling_stats import fixed_windows
from .reduce import DEFAULT_DDOF, check_statistics, with_quantile


def window_statistic(
    y: ArrayLike,
    window: int,
    statistic: str | Sequence[str] = "mean",
    *,
    min_periods: int = 1,
    ddof: int = DEFAULT_DDOF,
    nan_policy: str = "omit",
    method: str = "auto",
    q: float | None = None,
    center: bool = False,
    capacity: int | None = None,
) -> Array | dict[str, Array]:
    """Statistics over the last ``window`` points up to each row: pandas' ``rolling(w)``.

    Row ``i``'s window is ``y[max(i - window + 1, 0) : i + 1]`` (fewer points at the start;
    ``window > N`` is allowed); ``center=True`` is pandas' centred int window, ending
    ``(window - 1) // 2`` rows later. ``min_periods`` keeps this library's default 1 where
    pandas' is ``window``: ``pandas.Series(y).rolling(w).mean()`` is
    ``window_statistic(y, w, "mean", min_periods=w)``. No positions are needed; for windows
    of a width in x units use :func:`jaxsubset.rolling_statistic`.

    count/sum/mean/var/std/sem/min/max and cov/corr run on the O(N) block road
    (``method="blocks"``: van Herk / Gil-Werman prefix and suffix folds, each window combined
    from partials of its own points); the median and quantiles on the wavelet road
    (``O(log window)`` per window); first/last/skew/kurt on the tree over the same windows.
    :func:`jaxsubset.explain` prints the road each statistic took.

    Args:
        y: ``(N, *channels)`` values.
        window: static int >= 1, the number of points of every full window.
        statistic: a name of :data:`jaxsubset.STATISTICS` or ``"cov"``/``"corr"`` (between
            the channels of ``(N, C)`` ``y``), or a tuple/list of them (then a dict is
            returned). See :func:`jaxsubset.rolling_statistic` for each one's conventions.
        min_periods: static int >= 0, the fewest non-NaN points that give a result.
        ddof: static delta degrees of freedom of ``"var"``/``"std"``/``"sem"``/``"cov"``: 0
            (NumPy); pass 1 for pandas' ``rolling(w).std()``.
        nan_policy: ``"omit"`` (default, as pandas), ``"propagate"`` or ``"raise"``.
        method: ``"auto"``, ``"blocks"``, ``"tree"``, ``"wavelet"`` or ``"reference"``.
        q: static float in ``[0, 1]`` for ``statistic="quantile"`` (linear interpolation).
        center: static bool, pandas' ``rolling(w, center=True)``.
        capacity: static padded length for ``method="reference"`` and the order statistics;
            default ``window``.

    Returns:
        ``(N, *channels)`` float (``"count"``: int; ``"cov"``/``"corr"``: ``(N, C, C)``), or
        a dict of them by statistic name.

    Example:
        >>> import jax.numpy as jnp, jaxsubset
        >>> y = jnp.array([1.0, 2.0, 3.0, 4.0, 5.0])
        >>> jaxsubset.window_statistic(y, 2, "mean").tolist()
        [1.0, 1.5, 2.5, 3.5, 4.5]
        >>> jaxsubset.window_statistic(y, 3, "max", min_periods=3).tolist()
        [nan, nan, 3.0, 4.0, 5.0]
        >>> jaxsubset.window_statistic(y, 3, "sum", center=True).tolist()
        [3.0, 6.0, 9.0, 12.0, 9.0]
    """
    func = "window_statistic"
    names, single = check_statistics(statistic, func)
    stats = with_quantile(names, q, func)  # "quantile" -> "quantile(<q>)", q static
    min_periods = static_int(min_periods, "min_periods", func, minimum=0)
    ddof = static_int(ddof, "ddof", func, minimum=0)
    nan_policy = check_nan_policy(nan_policy, func)
    return fixed_windows(
        y, window, stats, names, single, center, min_periods, ddof, nan_policy, method,
        capacity, func,
    )  # fmt: skip
