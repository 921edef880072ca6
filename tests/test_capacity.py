"""Capacity planning from concrete data."""

import jax
import numpy as np
import pytest

import jaxsubset


def test_required_capacity_rounds_up_to_power_of_two():
    x = np.arange(1000.0)
    assert jaxsubset.required_capacity(jaxsubset.select, x, x, 10.0, 15.5) == 8
    assert (
        jaxsubset.required_capacity(
            jaxsubset.select, x, x, np.array([0.0, 5.0]), np.array([64.0, 6.0])
        )
        == 64
    )
    assert jaxsubset.required_capacity(jaxsubset.select, x, x, 0.0, 65.0) == 128
    assert jaxsubset.required_capacity(jaxsubset.rolling, x, x, 9.5) == 16
    assert jaxsubset.required_capacity(np.array([0, 0])) == 1
    assert jaxsubset.required_capacity(np.array([], dtype=int)) == 1
    s = jaxsubset.isolate(x, x, 0, 100, capacity=4)
    cap = jaxsubset.required_capacity(s)
    assert cap == 128
    assert not bool(jaxsubset.isolate(x, x, 0, 100, capacity=cap).overflow)


def test_required_capacity_needs_concrete_data():
    with pytest.raises(TypeError, match="needs concrete data"):
        jax.jit(lambda c: jaxsubset.required_capacity(c))(np.array([3]))
    with pytest.raises(TypeError, match="extra arguments are only taken with a constructor"):
        jaxsubset.required_capacity(np.array([3]), 4)
