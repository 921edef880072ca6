"""The foundations every layer stands on: typing, validation, axis keys,
trace helpers, run-time checks, eager bucket sizes and the reductions with one meaning on
every backend (NaN-keeping min/max, float sums in one fixed order).

Nothing here imports a layer above (``resolve/``, ``reduce/``, ``_statistics/``, the public
modules); the other packages import these names from ``jaxsubset._core``, never from its
private modules. ``bucketing`` is the bucket-size module (``_bucket``) as a namespace.
"""

from . import _bucket as bucketing
from ._axis import (
    bin_edges as bin_edges,
    bound_array as bound_array,
    concrete_bound as concrete_bound,
    datetime_to_ns as datetime_to_ns,
    exact_array as exact_array,
    int_limits as int_limits,
    naive_utc as naive_utc,
    period_edges as period_edges,
    time_kind as time_kind,
    timedelta_to_ns as timedelta_to_ns,
    to_datetime64 as to_datetime64,
    to_ns as to_ns,
    traced_array as traced_array,
    window_width as window_width,
    x_to_ns as x_to_ns,
)
from ._bucket import next_power_of_two as next_power_of_two
from ._checks import (
    argument_guard as argument_guard,
    checked as checked,
    error_if as error_if,
    nan_guard as nan_guard,
    reraise as reraise,
)
from ._reduce import (
    centre as centre,
    finite_extreme as finite_extreme,
    holds_nan as holds_nan,
    reduce_extreme as reduce_extreme,
    squared_deviations as squared_deviations,
)
from ._scan import blocked_scan as blocked_scan
from ._trace import (
    backend as backend,
    concrete_only as concrete_only,
    eager as eager,
    is_traced as is_traced,
    now_or_traced as now_or_traced,
    require_eager as require_eager,
)
from ._typing import (
    Array as Array,
    ArrayLike as ArrayLike,
    Bool as Bool,
    Int as Int,
    Shaped as Shaped,
)
from ._validate import (
    all_blocks as all_blocks,
    as_int_bounds as as_int_bounds,
    as_x as as_x,
    as_xy as as_xy,
    check_closed as check_closed,
    check_int_fits as check_int_fits,
    check_nan_policy as check_nan_policy,
    check_sorted_x as check_sorted_x,
    device_array as device_array,
    host_array as host_array,
    index_dtype as index_dtype,
    nan_in_x as nan_in_x,
    on_device as on_device,
    static_int as static_int,
    unsorted_x as unsorted_x,
)


__all__ = [
    "all_blocks",
    "blocked_scan",
    "next_power_of_two",
    "squared_deviations",
    "reduce_extreme",
    "holds_nan",
    "finite_extreme",
    "centre",
    "backend",
    "Shaped",
    "Int",
    "Bool",
    "ArrayLike",
    "Array",
    "argument_guard",
    "as_int_bounds",
    "as_x",
    "as_xy",
    "bin_edges",
    "bound_array",
    "bucketing",
    "check_closed",
    "check_int_fits",
    "check_nan_policy",
    "check_sorted_x",
    "checked",
    "concrete_bound",
    "datetime_to_ns",
    "device_array",
    "host_array",
    "on_device",
    "concrete_only",
    "eager",
    "error_if",
    "exact_array",
    "index_dtype",
    "int_limits",
    "is_traced",
    "now_or_traced",
    "naive_utc",
    "nan_guard",
    "nan_in_x",
    "period_edges",
    "require_eager",
    "reraise",
    "static_int",
    "time_kind",
    "timedelta_to_ns",
    "to_datetime64",
    "to_ns",
    "traced_array",
    "unsorted_x",
    "window_width",
    "x_to_ns",
]
