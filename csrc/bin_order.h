// The order statistics of the bins kernel (bins.cc): median and quantiles per bin, the
// points grouped by bin (a stable counting sort, skipped where the labels ascend: every bin
// is then an index range of y itself) and a selection per bin with order.cc's formulas, so
// bit for bit the reference road's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "bin_fold.h"
#include "kernels.h"

namespace jaxsubset {
namespace bins {

// NumPy's _lerp, the ranks and the values of order.cc (the same formulas, so the same bits
// as the range kernel and the reference road)
template <typename T>
inline T lerp(T a, T b, T t) {
  const T d = b - a;
  return t >= T(0.5) ? b - d * (T(1) - t) : a + d * t;
}

// the order statistics of the bins [start[k], start[k] + count[k]) of channel ch: the bin's
// non-NaN values copied and partially sorted (nth_element). NaN readings: left out (omit);
// nan_last: ranked above every value, SciPy's propagate median (NaN where a rank read is a
// NaN's); else a bin holding one gives NaN.
template <typename T>
void order_bins(const T* y, int64_t C, int64_t ch, const int64_t* start, const int64_t* count,
                int64_t nb, const std::vector<Out>& outs, bool omit, bool nan_last) {
  const T* yc = y + ch;
  std::vector<T> buf;
  for (int64_t k = 0; k < nb; ++k) {
    const int64_t s = start[k], e = s + count[k];
    buf.clear();
    int64_t nans = 0;
    for (int64_t i = s; i < e; ++i) {
      const T v = yc[i * C];
      if (std::isnan(v)) {
        ++nans;
      } else {
        buf.push_back(v);
      }
    }
    const int64_t held = static_cast<int64_t>(buf.size());
    const int64_t n = omit ? held : held + nans;  // the ranked values
    for (const Out& o : outs) {
      if (!is_order(o.stat)) continue;
      T res = nan_v<T>();
      if (n > 0 && (omit || nan_last || nans == 0)) {
        int64_t lo, hi;
        T t = T(0);
        if (o.stat == kMedian) {
          lo = (n - 1) / 2;
          hi = n / 2;
        } else {
          const T h = static_cast<T>(n - 1) * static_cast<T>(o.q);
          const T f = std::floor(h);
          lo = std::min(static_cast<int64_t>(f), n - 1);
          hi = std::min(lo + 1, n - 1);
          t = h - f;
        }
        if (hi < held) {  // (nan_last: a rank at or above `held` is a NaN's)
          auto at = buf.begin() + lo;
          std::nth_element(buf.begin(), at, buf.end());
          const T a = *at;
          const T b = hi > lo ? *std::min_element(at + 1, buf.end()) : a;
          res = o.stat == kMedian ? (a + b) / T(2) : lerp(a, b, t);
        }
      }
      o.put<T>(k, C, ch, res);
    }
  }
}

template <typename T, typename Lab>
void order_by_labels(const T* y, int64_t C, int64_t N, int64_t nb, const Lab& lab,
                     const std::vector<Out>& outs, bool omit, bool nan_last) {
  std::vector<int64_t> start(nb + 1, 0), count(nb + 1, 0);
  // ascending: the points in bins one run [lo, hi] of y, their labels non-decreasing
  bool ascending = true;
  int64_t prev = 0, lo = -1, hi = -1;
  int32_t buf[kBlock];
  for (int64_t i0 = 0; i0 < N; i0 += kBlock) {
    const int64_t len = std::min(kBlock, N - i0);
    const int32_t* lb = lab.get(i0, len, buf);
    for (int64_t i = 0; i < len; ++i) {
      const int64_t b = lb[i];
      ++count[b];
      if (b == nb) continue;
      ascending &= b >= prev;
      prev = b;
      lo = lo < 0 ? i0 + i : lo;
      hi = i0 + i;
    }
  }
  int64_t total = 0;
  for (int64_t b = 0; b < nb; ++b) total += count[b];
  if (ascending && (total == 0 || hi - lo + 1 == total)) {
    // every bin a run of y: [lo + points before it, ...)
    int64_t s = lo < 0 ? 0 : lo;
    for (int64_t b = 0; b < nb; ++b) {
      start[b] = s;
      s += count[b];
    }
    for (int64_t ch = 0; ch < C; ++ch) {
      order_bins<T>(y, C, ch, start.data(), count.data(), nb, outs, omit, nan_last);
    }
    return;
  }
  int64_t s = 0;
  for (int64_t b = 0; b < nb; ++b) {
    start[b] = s;
    s += count[b];
  }
  std::vector<T> ys(static_cast<size_t>(total * C));
  std::vector<int64_t> at(start.begin(), start.begin() + nb);
  for (int64_t i0 = 0; i0 < N; i0 += kBlock) {
    const int64_t len = std::min(kBlock, N - i0);
    const int32_t* lb = lab.get(i0, len, buf);
    for (int64_t i = 0; i < len; ++i) {
      const int64_t b = lb[i];
      if (b == nb) continue;
      const int64_t j = at[b]++;
      for (int64_t ch = 0; ch < C; ++ch) ys[j * C + ch] = y[(i0 + i) * C + ch];
    }
  }
  for (int64_t ch = 0; ch < C; ++ch) {
    order_bins<T>(ys.data(), C, ch, start.data(), count.data(), nb, outs, omit, nan_last);
  }
}

}  // namespace bins
}  // namespace jaxsubset
