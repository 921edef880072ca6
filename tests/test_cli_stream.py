"""`jaxsubset stats` streams big .npy files block by block, with the in-memory path's results."""

import numpy as np
import pandas as pd
import pytest

import jaxsubset


# the same in either JAX mode (the command switches 64-bit mode on; lint, imports and
# dependencies have no mode): run once, in the 64-bit run (see conftest.py)
pytestmark = pytest.mark.one_mode


@pytest.fixture(scope="module")
def npy(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 20_000
    x = np.sort(rng.uniform(0, 100, n))
    y = rng.normal(size=n)
    y[::37] = np.nan
    path = tmp_path_factory.mktemp("big") / "data.npy"
    np.save(path, np.stack([x, y], axis=1))
    return path


@pytest.mark.parametrize(
    "subsets",
    [
        ["--chunks", "7"],
        ["--size", "3000"],
        ["--window", "999", "--step", "500"],
        ["--width", "0.5"],
        ["--bins", "13"],
    ],
)
def test_streamed_table_equals_in_memory_table(npy, tmp_path, subsets, monkeypatch, run):
    stats = ["--stat", "count,mean,std,min,max,median,valid"]
    whole, streamed = tmp_path / "whole.csv", tmp_path / "streamed.csv"
    rc, _, err = run(npy, *subsets, *stats, "--out", whole)
    assert rc == 0, err
    calls = []
    real = jaxsubset.stream
    monkeypatch.setattr(jaxsubset, "stream", lambda *a, **k: calls.append(1) or real(*a, **k))
    rc, _, err = run(npy, *subsets, *stats, "--out", streamed, "--stream-above", "0")
    assert rc == 0, err
    assert calls == [1]
    assert "(streamed)" in err
    a, b = pd.read_csv(whole), pd.read_csv(streamed)
    assert list(a.columns) == list(b.columns)
    # atol: the in-memory table comes from range_statistic's prefix sums (nan_policy="omit"),
    # exact to ~1e-16 of the data's scale, so a mean near zero differs in its last digits
    for col in a.columns:
        np.testing.assert_allclose(
            a[col].to_numpy(float),
            b[col].to_numpy(float),
            rtol=1e-12,
            atol=1e-14,
            equal_nan=True,
            err_msg=col,
        )


def test_streamed_bad_input_exits_2_without_output(npy, tmp_path, run):
    data = np.load(npy)
    data[[10, 11], 0] = data[[11, 10], 0]
    bad = tmp_path / "unsorted.npy"
    np.save(bad, data)
    out = tmp_path / "out.csv"
    rc, _, err = run(bad, "--chunks", "3", "--stream-above", "0", "--out", out)
    assert rc == 2
    err = err.strip().splitlines()
    assert len(err) == 1 and "is not sorted ascending (row 11:" in err[0]
    assert not out.exists()
    rc, _, err = run(npy, "--chunks", 3, "--stream-above", 0, "--nan-policy", "raise", "--out", out)
    assert rc == 2
    assert "missing y reading(s), the first at row 0" in err
    assert not out.exists()
