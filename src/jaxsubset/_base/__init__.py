"""The foundations without JAX: the statistics' names and the periods and duration units.

Importable without importing JAX (the command checks its options and the input's header
with them before it starts JAX); ``jaxsubset._core`` and the statistics' registry build on
them. Other packages import these names from ``jaxsubset._base``, never its private modules.
"""

from ._names import PAIR_STATISTICS as PAIR_STATISTICS, STATISTICS as STATISTICS
from ._periods import (
    CALENDAR as CALENDAR,
    CALENDAR_MONTHS as CALENDAR_MONTHS,
    DAY_NS as DAY_NS,
    DURATION as DURATION,
    MAX_MONTHS as MAX_MONTHS,
    MAX_NS as MAX_NS,
    PERIOD as PERIOD,
    UNIT_ALIASES as UNIT_ALIASES,
    PeriodError as PeriodError,
    duration_ns as duration_ns,
    is_period as is_period,
    parse_period as parse_period,
    read_period as read_period,
)


__all__ = [
    "CALENDAR",
    "CALENDAR_MONTHS",
    "DAY_NS",
    "DURATION",
    "MAX_MONTHS",
    "MAX_NS",
    "PAIR_STATISTICS",
    "PERIOD",
    "PeriodError",
    "STATISTICS",
    "UNIT_ALIASES",
    "duration_ns",
    "is_period",
    "parse_period",
    "read_period",
]
