"""The request: what a caller asks a statistic of, as one frozen, hashable object."""

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Request:
    """What a public function asks the reduce layer for (static facts only: hashable).

    Attributes:
        func: the public function, for error messages and reports.
        kind: how the subsets are laid out: ``"ranges"`` (index ranges of sorted x),
            ``"windows"`` (one x-width window per row, which may turn out fixed-count),
            ``"sliding"`` (trailing windows of a fixed number of points) or ``"bins"``
            (disjoint bins, of sorted or unsorted x).
        statistics: the dispatcher's statistic names (``"quantile(0.9)"`` carries its ``q``).
        method: ``"auto"`` or a road's name (``method=`` of the public functions).
        ddof: delta degrees of freedom of var/std/sem/cov.
        omit: leave NaN readings out (``nan_policy="omit"``).
        capacity: the static padded length the caller gave (None: derived); inside the
            dispatchers, the padded length of the padded and wavelet roads.
        min_periods: fewer counted points than this give NaN (windows only).
        bound: a static bound on every range's length (never smaller than any count), the
            padded length of the folded statistics where ``padded`` sends them to the
            padded road (``reduce_ranges`` only; None: no bound known).
        padded: :func:`padded_fits` of the real shapes (the chooser's ``Choice.padded``):
            whether ``"auto"`` takes the padded road for the folded statistics (with
            ``bound``) and the order statistics (with ``capacity``).

    The dispatchers (``reduce_ranges``, ``reduce_labels``) take one, beside the arrays; a
    request is a static argument of a compiled program (it is hashed), so it holds no array.
    """

    func: str
    kind: str
    statistics: tuple[str, ...]
    method: str = "auto"
    ddof: int = 0
    omit: bool = False
    capacity: int | None = None
    min_periods: int | None = None
    bound: int | None = None
    padded: tuple[bool, bool] = (False, False)

    def replace(self, **changes: Any) -> "Request":
        """A copy with ``changes`` (the request is frozen)."""
        return dataclasses.replace(self, **changes)
