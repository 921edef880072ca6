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
#include "bin_pieces.h"
#include "kernels.h"
#include "parallel.h"
#include "select.h"

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
// non-NaN values copied and partially sorted (select.h). NaN readings: left out (omit);
// nan_last: ranked above every value, SciPy's propagate median (NaN where a rank read is a
// NaN's); else a bin holding one gives NaN.
template <typename T>
void order_bins(const T* y, int64_t C, int64_t ch, const int64_t* start, const int64_t* count,
                int64_t nb, const std::vector<Out>& outs, bool omit, bool nan_last) {
  const T* yc = y + ch;
  std::vector<T> buf;
  for (int64_t k = 0; k < nb; ++k) {
    const int64_t s = start[k], e = s + count[k];
    const int64_t nans = copy_held(yc, C, s, e, buf);
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
          const T a = select_kth(buf.data(), held, lo);
          const T b = hi > lo ? *std::min_element(buf.begin() + lo + 1, buf.end()) : a;
          res = o.stat == kMedian ? (a + b) / T(2) : lerp(a, b, t);
        }
      }
      o.put<T>(k, C, ch, res);
    }
  }
}

// order_bins of every channel, the bins cut into pieces by their point counts (bin_pieces):
// each bin's selection reads its own points and writes its own row, so any cut and any number
// of threads give the same bits
template <typename T>
void order_bins_pieces(xla::ffi::ThreadPool* pool, const T* y, int64_t C, const int64_t* start,
                       const int64_t* count, int64_t nb, const std::vector<Out>& outs,
                       bool omit, bool nan_last) {
  const std::vector<int64_t> cut = bin_pieces(count, nb);
  for_pieces(pool, static_cast<int64_t>(cut.size()) - 1, [&](int64_t j) {
    const int64_t k0 = cut[j], k1 = cut[j + 1];
    const std::vector<Out> mine = from_bin(outs, k0, C, sizeof(T));
    for (int64_t ch = 0; ch < C; ++ch) {
      order_bins<T>(y, C, ch, start + k0, count + k0, k1 - k0, mine, omit, nan_last);
    }
  });
}

// One piece of points' bin counts (nb + 1 slots) and whether its labels ascend: the first
// and last label in a bin, and where the first and last such point is.
struct CountRun {
  std::vector<int64_t> count;
  bool ascending = true;
  int64_t first_b = -1, last_b = -1, lo = -1, hi = -1;
};

template <typename Lab>
void count_run(const Lab& lab, int64_t i_lo, int64_t i_hi, int64_t nb, CountRun& r) {
  r.count.assign(static_cast<size_t>(nb + 1), 0);
  int64_t* count = r.count.data();
  int32_t buf[kBlock];
  for (int64_t i0 = i_lo; i0 < i_hi; i0 += kBlock) {
    const int64_t len = std::min(kBlock, i_hi - i0);
    const int32_t* lb = lab.get(i0, len, buf);
    for (int64_t i = 0; i < len; ++i) {
      const int64_t b = lb[i];
      ++count[b];
      if (b == nb) continue;
      r.ascending &= r.last_b < 0 || b >= r.last_b;
      r.first_b = r.first_b < 0 ? b : r.first_b;
      r.last_b = b;
      r.lo = r.lo < 0 ? i0 + i : r.lo;
      r.hi = i0 + i;
    }
  }
}

// The points grouped by bin and the order statistics of each bin. Pieces of points (by N and
// nb alone) count their labels; the counts, merged in piece order, give every bin's start and
// every piece its place inside each bin (the points before it in piece order), so the
// parallel scatter writes the permutation of one stable counting sort; then the bins in
// pieces (order_bins_pieces). The same bits for any number of threads, and the reference's.
template <typename T, typename Lab>
void order_by_labels(xla::ffi::ThreadPool* pool, const T* y, int64_t C, int64_t N, int64_t nb,
                     const Lab& lab, const std::vector<Out>& outs, bool omit, bool nan_last) {
  const PointPieces pp = point_pieces(N, nb);
  std::vector<CountRun> runs(static_cast<size_t>(pp.count));
  for_pieces(pool, pp.count, [&](int64_t p) {
    count_run(lab, pp.begin(p), pp.end(p, N), nb, runs[p]);
  });
  // ascending: the points in bins one run [lo, hi] of y, their labels non-decreasing
  std::vector<int64_t> start(nb + 1, 0), count(nb + 1, 0);
  bool ascending = true;
  int64_t prev = -1, lo = -1, hi = -1;
  for (const CountRun& r : runs) {
    for (int64_t b = 0; b <= nb; ++b) count[b] += r.count[b];
    if (r.first_b < 0) continue;
    ascending &= r.ascending && r.first_b >= prev;
    prev = r.last_b;
    lo = lo < 0 ? r.lo : lo;
    hi = r.hi;
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
    order_bins_pieces<T>(pool, y, C, start.data(), count.data(), nb, outs, omit, nan_last);
    return;
  }
  int64_t s = 0;
  for (int64_t b = 0; b < nb; ++b) {
    start[b] = s;
    s += count[b];
  }
  // each piece's place in each bin: the bin's start plus the earlier pieces' points there
  for (int64_t b = 0; b < nb; ++b) {
    int64_t at = start[b];
    for (CountRun& r : runs) {
      const int64_t c = r.count[b];
      r.count[b] = at;
      at += c;
    }
  }
  std::vector<T> ys(static_cast<size_t>(total * C));
  for_pieces(pool, pp.count, [&](int64_t p) {
    int64_t* at = runs[p].count.data();
    int32_t buf[kBlock];
    const int64_t i_hi = pp.end(p, N);
    for (int64_t i0 = pp.begin(p); i0 < i_hi; i0 += kBlock) {
      const int64_t len = std::min(kBlock, i_hi - i0);
      const int32_t* lb = lab.get(i0, len, buf);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t b = lb[i];
        if (b == nb) continue;
        const int64_t j = at[b]++;
        for (int64_t ch = 0; ch < C; ++ch) ys[j * C + ch] = y[(i0 + i) * C + ch];
      }
    }
  });
  order_bins_pieces<T>(pool, ys.data(), C, start.data(), count.data(), nb, outs, omit,
                       nan_last);
}

}  // namespace bins
}  // namespace jaxsubset
