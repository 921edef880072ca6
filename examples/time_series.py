"""A daily time series with missing readings: a 30-day rolling mean and monthly means.

Three years of synthetic daily temperatures with a seasonal cycle, noise, scattered missing
readings (NaN) and a station outage of six weeks. ``rolling_statistic`` computes pandas'
offset-window rolling mean and standard deviation (``"30D"``: the readings of the last 30
days, NaN skipped), ``binned_statistic(..., bins="1M")`` the calendar-month means (pandas'
``resample("MS").mean()``, empty months kept as NaN).

Run:  python examples/time_series.py [OUT_DIR]
(with OUT_DIR, it also draws its figure there: OUT_DIR/time_series.png)
"""

import os
import sys

import jax
import numpy as np


# Dates are exact int64 nanoseconds inside jaxsubset, so time axes use JAX's 64-bit mode.
jax.config.update("jax_enable_x64", True)

import jaxsubset  # noqa: E402


def make_data(seed=0):
    """``(dates, temperature)``: daily readings with NaN gaps and a 6-week outage."""
    rng = np.random.default_rng(seed)
    dates = np.arange("2021-01-01", "2024-01-01", dtype="datetime64[D]")
    day = np.arange(dates.size)
    temp = 11 - 9 * np.cos(2 * np.pi * day / 365.25) + rng.normal(0, 2.5, dates.size)
    temp[rng.random(dates.size) < 0.05] = np.nan  # 5% missing readings
    keep = (dates < np.datetime64("2022-06-01")) | (dates >= np.datetime64("2022-07-15"))
    return dates[keep].astype("datetime64[ns]"), temp[keep]  # the outage: no samples at all


def analyse(dates, temp):
    rolling = jaxsubset.rolling_statistic(dates, temp, "30D", ("mean", "std", "count"))
    monthly = jaxsubset.binned_statistic(dates, temp, "mean", bins="1M", nan_policy="omit")
    return {k: np.asarray(v) for k, v in rolling.items()}, monthly


def figure(dates, temp, rolling, monthly, path):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(dates, temp, ".", ms=2, color="0.6", label="daily readings")
    mean, std = rolling["mean"], rolling["std"]
    ax.fill_between(
        dates, mean - std, mean + std, color="C0", alpha=0.25, lw=0, label="30-day mean ± std"
    )
    ax.plot(dates, mean, color="C0", lw=1.5)
    edges = monthly.bin_edges
    ax.stairs(monthly.statistic, edges, baseline=None, color="C3", lw=1.5, label="monthly mean")
    ax.axvspan(
        np.datetime64("2022-06-01"),
        np.datetime64("2022-07-15"),
        color="0.9",
        label="station outage",
    )
    ax.set_ylabel("temperature (°C)")
    ax.set_title("rolling_statistic(dates, t, '30D') and binned_statistic(bins='1M')")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize="small")
    fig.tight_layout()
    fig.savefig(path)


def main(out_dir=None):
    dates, temp = make_data()
    rolling, monthly = analyse(dates, temp)
    print(f"{dates.size} days, {int(np.isnan(temp).sum())} missing readings")
    counts = rolling["count"].astype(int)
    print(f"30-day windows: {counts.min()} to {counts.max()} readings")
    months = np.datetime_as_string(monthly.bin_edges[:-1], unit="M")
    empty = months[np.isnan(monthly.statistic)]
    print(f"{months.size} months, without a reading: {', '.join(empty) or 'none'}")
    warmest = months[np.nanargmax(monthly.statistic)]
    print(f"warmest month: {warmest} ({np.nanmax(monthly.statistic):.1f} °C)")
    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
        figure(dates, temp, rolling, monthly, os.path.join(out_dir, "time_series.png"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
