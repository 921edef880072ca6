"""THE road choice: one function decides how every statistic is computed, and says why.

:func:`choose` takes a :class:`Request` and the static facts of the call (how many subsets,
how many points, bounds on their lengths, for x-width windows the resolved ranges) and returns
a :class:`Choice`: the layout the subsets are reduced in and the road of each statistic. Every
public statistic function asks it once, at its boundary; the dispatchers below take the road
of each statistic from :func:`road`, the same function :func:`choose` reports, so what
:func:`jaxsubset.explain` prints is what runs. ``method=`` overrides ``"auto"``.

A new road plugs in here: an entry in the road tables of ``reduce._registry``
(``RANGE_ROADS``/``SLIDING_ROADS``/``LABEL_ROADS``, its name in ``METHODS``), and one branch in
:func:`road` saying when ``"auto"`` takes it (a native CPU road: ``backend() == "cpu"`` and
the statistic in its table entry).
"""

import contextvars
import dataclasses
from typing import Any

import numpy as np

from .. import _native
from ._registry import (
    BLOCK_BIN_STATISTICS,
    LABEL_ROADS,
    ORDER,
    RANGE_ROADS,
    SLIDING_ROADS,
    backend,
    base_name,
    block_size,
    native_first,
)
from ._request import Request


# The padded road gathers ``K * capacity`` slots and reduces them in one masked pass (in
# batches of bounded memory); the tree builds tables over all ``N`` points whatever ``K``.
# Where a static bound on the ranges' lengths is known and the slots are at most these many
# per point (a few long ranges: chunks, bins, selections, windows of a few points), "auto"
# takes the padded road: the smaller program to compile, the cheaper one to run on every
# backend, and the reference itself. The order statistics sort their slots (``K * capacity *
# log capacity``), so they take it at a lower ratio.
PADDED_SLOTS_PER_POINT = 8
PADDED_ORDER_SLOTS_PER_POINT = 2


@dataclasses.dataclass(frozen=True)
class Choice:
    """What :func:`choose` decided for one call: printable (``str(choice)``).

    Attributes:
        request: the :class:`Request` it was asked.
        layout: how the subsets are reduced: ``"ranges"``, ``"sliding"`` (fixed-count
            windows), ``"labels"`` (a bin label per point) or ``"blocks"`` (bins of sorted x
            by whole blocks).
        roads: ``((statistic, road), ...)`` in the request's order.
        padded: for ``"ranges"``, :func:`padded_fits`' answer (folded, order statistics).
        fixed: for x-width windows found fixed-count: ``(w, lead)`` (see :func:`fixed_count`).
        why: the reason for the layout, in words.
    """

    request: Request
    layout: str
    roads: tuple[tuple[str, str], ...]
    padded: tuple[bool, bool] = (False, False)
    fixed: tuple[int, int] | None = None
    why: str = ""

    def road_of(self, statistic: str) -> str:
        """The road of one of the request's statistics."""
        return dict(self.roads)[statistic]

    def __str__(self) -> str:
        r = self.request
        forced = "" if r.method == "auto" else f" (method={r.method!r})"
        roads = ", ".join(f"{s} -> {road}" for s, road in self.roads)
        return f"{r.func}{forced}: {self.layout}: {roads} ({self.why})"


_RECORD: contextvars.ContextVar[list[Choice] | None] = contextvars.ContextVar(
    "jaxsubset_choices", default=None
)


def choose(
    request: Request,
    *,
    k: int = 0,
    n: int = 0,
    bound: int | None = None,
    capacity: int | None = None,
    x_sorted: bool = True,
    windows: tuple[Any, Any] | None = None,
    resolved: bool = True,
) -> Choice:
    """THE road choice for one call (recorded while :func:`jaxsubset.explain` runs).

    Args:
        request: what is asked (:class:`Request`; ``method`` already validated).
        k: the real number of subsets (an eager call's buckets pad it; the real one decides,
            so a bucketed call takes the unbucketed call's roads).
        n: the real number of points.
        bound: a static bound on every range's length (None: unknown).
        capacity: the padded length of the order statistics' road (None: none).
        x_sorted: for bins, whether x is sorted (then every bin is an index range). For bins
            ``k`` is the number of bins and ``n`` the number of points.
        resolved: for bins, whether the native kernel finds the bins from x itself (float x
            against edges of its dtype); else every point's bin number is computed in XLA
            first (integer and time axes).
        windows: for one x-width window per row, the resolved ``(start, count)`` on the
            host: fixed-count windows (:func:`fixed_count`) are reduced as such. A probe
            that finds none is not recorded (the caller then asks with ``bound`` and
            ``capacity``).

    Returns:
        The :class:`Choice`.
    """
    method, stats = request.method, request.statistics
    padded = (False, False)
    fixed = None
    if request.kind == "sliding":
        layout, why = "sliding", "fixed-count windows"
    elif request.kind == "bins":
        layout, why = bins_layout(x_sorted, stats, method, n=n, nbins=k, resolved=resolved)
    else:
        if request.kind == "windows" and windows is not None:
            fixed = fixed_count(*windows)
        if fixed is not None and method == "auto":
            layout, why = "sliding", f"fixed-count windows of {fixed[0]} points"
        else:
            fixed = None
            padded = padded_fits(k, n, bound, capacity)
            layout = "ranges"
            why = f"{k} ranges over {n} points" + (
                f", padded road fits (folded={padded[0]}, order={padded[1]})" if any(padded) else ""
            )
    roads = tuple((s, road(layout, s, method, request.func, padded)) for s in stats)
    choice = Choice(request, layout, roads, padded, fixed, why)
    record = _RECORD.get()
    # a windows probe that found no fixed-count windows is not the final choice: the caller
    # asks again with the ranges' bound and capacity
    probe = request.kind == "windows" and windows is not None and fixed is None
    if record is not None and not probe:
        record.append(choice)
    return choice


def padded_fits(k: int, n: int, bound: int | None, capacity: int | None) -> tuple[bool, bool]:
    """Whether the padded road is the cheaper one for ``k`` ranges over ``n`` points.

    The caller passes the real ``k`` and ``n`` (an eager call's buckets pad them), so a
    bucketed call takes the road an unbucketed one takes.

    Returns:
        ``(folded, order)``: for the folded statistics (fewer ranges than points, every one
        at most ``bound`` points long; None: unknown); for the order statistics, padded to
        their ``capacity`` (selections: the same bits for any number of ranges).
    """
    # windows (a range per point) keep their roads: an eager call pads their number with N,
    # and the padded road's sums, unlike the tree's folds, are not bit for bit the same for
    # another number of ranges (XLA's reduction order follows the shapes)
    folded = bound is not None and k < n and k * bound <= PADDED_SLOTS_PER_POINT * n
    n = max(n, 1)
    order = capacity is not None and k * capacity <= PADDED_ORDER_SLOTS_PER_POINT * n
    return folded, order


def road(
    kind: str,
    statistic: str,
    method: str,
    func: str,
    padded: tuple[bool, bool] = (False, False),
) -> str:
    """Which road computes ``statistic`` over subsets laid out as ``kind``.

    Args:
        kind: ``"ranges"`` (contiguous index ranges of sorted x), ``"sliding"`` (trailing
            windows of a fixed number of points) or ``"labels"`` (a bin label per point, any
            order).
        statistic: a name of :data:`STATISTICS`.
        method: ``"auto"`` or a road name (validated by ``check_method``).
        func: the public function, for error messages.
        padded: for ``"ranges"``, :func:`padded_fits`' answer: whether the padded road is
            the cheaper one for the folded and for the order statistics.

    Returns:
        The road's name. ``"auto"`` picks the fast road of the backend family, or the padded
        road where its slots are few (:func:`padded_fits`); a forced road that
        cannot compute ``statistic`` is an error naming both.
    """
    if kind == "blocks":  # bins of sorted x by whole blocks: one road (``bins_layout``)
        return "blocks"
    roads = {"ranges": RANGE_ROADS, "sliding": SLIDING_ROADS}.get(kind, LABEL_ROADS)
    statistic = base_name(statistic)
    if method == "auto" and native_first(statistic):
        return "native"  # on the CPU, where the kernels are built: windows, ranges, labels
    if method == "native" and not _native.available():
        raise RuntimeError(
            f"{func}: method='native' cannot run here: the native road is "
            f"{_native.status()}; use method='auto'"
        )
    if method == "auto":
        if kind == "sliding":
            # fixed-count windows are static: the O(N) block road on every backend (sums as a
            # matmul on the CPU, cumulative sums elsewhere); the rest as ranges
            if statistic in SLIDING_ROADS["blocks"]:
                return "blocks"
            return road("ranges", statistic, method, func)
        if kind == "ranges":
            if padded[statistic in ORDER]:
                return "reference"
            # the order statistics: the wavelet road on every backend (sorts, scatters of
            # unique indices, gathers), O(log capacity) per range instead of a padded sort
            return "tree" if statistic in RANGE_ROADS["tree"] else "wavelet"
        # scatters are fast on the CPU; on GPUs/TPUs scatter-adds serialise on collisions, so
        # there one sort groups the points and the range road finishes (as it does for the
        # statistics the scatter road has no formula for)
        fast = backend() == "cpu" and statistic in LABEL_ROADS["scatter"]
        return "scatter" if fast else "sort"
    if statistic not in roads[method]:
        raise ValueError(
            f"{func}: method={method!r} cannot compute {statistic!r}; it computes "
            f"{', '.join(map(repr, roads[method]))}"
        )
    return method


def bins_layout(
    x_sorted: bool,
    stats: tuple[str, ...],
    method: str,
    *,
    n: int = 0,
    nbins: int = 0,
    resolved: bool = True,
) -> tuple[str, str]:
    """How disjoint bins are reduced: ``("blocks" | "labels" | "ranges", why)``.

    Bins of sorted x are also index ranges. ``"auto"`` takes the native road on the CPU where
    the kernels run (``"labels"``, every statistic native: the kernel resolves each point's
    bin from x and the edges, and finds the bins of sorted x by a binary search per edge),
    unless the kernel cannot resolve them (``resolved`` False: integer and time axes, whose
    every bin number XLA would compute first) and whole blocks apply, which read the bins of
    a few points only.
    Else it reduces bins of sorted x by whole blocks (``_statistics._blocks``: a vectorised
    pass per statistic instead of a scatter per point, on every backend) where every
    statistic asked is one of :data:`BLOCK_BIN_STATISTICS` and the ``n`` points fill the
    ``nbins`` bins with enough points each for blocks to pay (``_registry.block_size``).
    Otherwise, on the CPU, by labels (scatters are O(N) and cache-friendly there, whatever
    the order); elsewhere sorted bins are ranges on the tree, except the median
    (the range median is the padded one), and unsorted bins are labels (one sort).
    """
    if method in ("scatter", "sort"):
        return "labels", f"method={method!r} is a label road"
    if method == "native":
        return "labels", "method='native': one native pass, the bins resolved in the kernel"
    if method in ("tree", "wavelet"):
        return "ranges", f"method={method!r} is a range road"
    if method == "reference":
        return ("ranges", "sorted x") if x_sorted else ("labels", "unsorted x")
    blockable = (
        x_sorted
        and method == "auto"
        and all(base_name(s) in BLOCK_BIN_STATISTICS for s in stats)
        and block_size(n, nbins) is not None
    )
    if method == "auto" and all(native_first(s) for s in stats) and (resolved or not blockable):
        return "labels", "on the CPU: one native pass, the bins resolved in the kernel"
    if blockable:
        return "blocks", f"sorted x, {n} points in {nbins} bins: whole blocks"
    if backend() == "cpu":
        return "labels", "bins on the CPU: scatters by label"
    if not x_sorted:
        return "labels", "unsorted x: one sort by label"
    if any(base_name(s) in ORDER for s in stats):
        return "labels", "an order statistic: one sort by label"
    return "ranges", "sorted x: every bin is an index range"


def fixed_count(start: Any, count: Any) -> tuple[int, int] | None:
    """``(w, lead)`` when concrete windows (one per row) are fixed-count ones, else None.

    Row ``i``'s window must be ``[i + lead + 1 - w, i + lead]`` cut to the data, for one
    ``w >= 1`` and one ``lead >= 0``: the trailing windows of ``w`` points ``lead`` rows
    later. Read from the resolved ranges on the host, so the windows are exactly the same
    whatever the rounding of ``x`` (where every window of an eager call holds the same number
    of points, trailing or leading by a fixed number of rows and cut only at the ends of the
    data: evenly spaced x, a width a multiple of its step).
    """
    st, ct = np.asarray(start).reshape(-1), np.asarray(count).reshape(-1)
    n = ct.shape[0]
    if n == 0 or st.shape[0] != n:
        return None
    w = int(ct.max())
    lead = int(st[0] + ct[0]) - 1
    if w < 1 or lead < 0 or lead >= n:
        return None
    end = np.minimum(np.arange(n) + lead + 1, n)
    first = np.maximum(np.arange(n) + lead + 1 - w, 0)
    if not (np.array_equal(st, first) and np.array_equal(st + ct, end)):
        return None
    return w, lead
