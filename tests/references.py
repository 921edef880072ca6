"""Independent NumPy references shared by the tests."""

import numpy as np


# What nan_policy="omit" must equal: NumPy's NaN-skipping reductions.
NAN_FUNCS = {
    "sum": np.nansum,
    "mean": np.nanmean,
    "var": np.nanvar,
    "std": np.nanstd,
    "min": np.nanmin,
    "max": np.nanmax,
    "median": np.nanmedian,
}
