"""Static int arguments beyond what JAX can hold are a ValueError naming the argument.

Before the bound, ``capacity=2**40`` (32-bit mode) or ``ddof=10**20`` reached JAX and came back
as an OverflowError naming no argument.
"""

import re

import numpy as np
import pytest

import jaxsubset
from jaxsubset._core._validate import static_int
from references import X64


LIMIT = 2**63 - 1 if X64 else 2**31 - 1
LIMIT_TEXT = "2**63-1" if X64 else "2**31-1"


def test_static_int_upper_bound_follows_the_mode():
    assert static_int(LIMIT, "capacity", "f") == LIMIT
    with pytest.raises(ValueError, match=rf"f: `capacity` must be at most {re.escape(LIMIT_TEXT)}"):
        static_int(LIMIT + 1, "capacity", "f")
    with pytest.raises(ValueError, match=r"g: `ddof` must be at most .*got 100000000000000000000"):
        static_int(10**20, "ddof", "g", minimum=0)
    assert static_int(7, "n", "f", maximum=7) == 7
    with pytest.raises(ValueError, match="`n` must be at most 7, got 8"):
        static_int(8, "n", "f", maximum=7)


@pytest.mark.skipif(X64, reason="2**40 fits int64: the bound applies in 32-bit mode")
def test_capacity_2_to_the_40_in_32_bit_mode_names_capacity():
    x = np.arange(10.0, dtype=np.float32)
    with pytest.raises(ValueError, match=r"isolate: `capacity` must be at most 2\*\*31-1"):
        jaxsubset.isolate(x, x, 0, 5, capacity=2**40)


def test_overflowing_capacity_and_ddof_name_the_argument():
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="isolate: `capacity` must be at most"):
        jaxsubset.isolate(x, x, 0, 5, capacity=10**20)
    with pytest.raises(ValueError, match=r"`ddof` must be at most .*got 100000000000000000000"):
        jaxsubset.range_statistic(x, jaxsubset.ranges.chunks(x, 2), "std", ddof=10**20)
    with pytest.raises(ValueError, match=r"`ddof` must be at most"):
        jaxsubset.rolling_statistic(x, x, 2.0, "std", ddof=10**20)
