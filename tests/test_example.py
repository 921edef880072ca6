"""The motivating example: equals NumPy slicing exactly, one compilation for all subsets."""

import importlib.util
import pathlib

import numpy as np


def load_example():
    path = pathlib.Path(__file__).parents[1] / "examples" / "motivating_example.py"
    spec = importlib.util.spec_from_file_location("motivating_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_motivating_example_equals_numpy_slicing_with_one_compilation(capsys):
    ex = load_example()
    x, y, bounds, results = ex.run()
    assert len(ex.TRACES) == 1
    x, y = np.asarray(x), np.asarray(y)
    for idx, (subset, stats) in zip(bounds, results, strict=True):
        seg_x, seg_y = x[idx[0] : idx[-1] + 1], y[idx[0] : idx[-1] + 1]  # NumPy slicing
        mask = np.asarray(subset.mask)
        assert int(subset.count) == seg_y.size == 200 and not bool(subset.overflow)
        np.testing.assert_array_equal(np.asarray(subset.x)[mask], seg_x)
        np.testing.assert_array_equal(np.asarray(subset.y)[mask], seg_y)
        np.testing.assert_allclose(stats["mean"], seg_y.mean(), atol=1e-6)
        np.testing.assert_allclose(stats["std"], seg_y.std(), rtol=1e-6)
        assert stats["min"] == seg_y.min() and stats["max"] == seg_y.max()
    ex.main()
    out = capsys.readouterr().out
    assert "compilations of the master function: 1" in out
