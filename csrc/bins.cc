// Binned statistics (issue 27): the FFI handler jaxsubset_bin_stats.
//
// jaxsubset_bin_stats(y, src, edges, dec) -> one result per requested statistic
//   y      (*B, N, C) float32/float64 (integers and float16 are converted by the caller)
//   src    (*B, N)    mode 0: int32/int64 bin labels (0..K-1; any other value: in no bin);
//                     modes 1 (any order) and 2 (ascending): float32/float64 positions x,
//                     in the edges' dtype
//   edges  (*B, K + 1) the strictly increasing bin edges (modes 1, 2; mode 0: unused)
//   dec    (*B, 1)    int32, the decimals of SciPy's last-edge rule (modes 1, 2)
//   results (*B, K, C): y's float dtype, "count" in an int32/int64 dtype
//   attrs  stats (codes of common.h), qs, omit (0/1), ddof, mode (+ 4: the order statistics
//          rank NaN above every value, SciPy's propagate median: NaN where a rank read is a
//          NaN's)
//
// The bin of a point is EXACTLY _binned.binnumber's: the number of edges at or below x,
// compared as order-preserving integer keys (resolve/_keys.keys: no flush of subnormals, -0.0
// as +0.0), NaN above every bin; a point at or above the last edge whose numpy.around(x, dec)
// equals around(last, dec) goes to the last bin (SciPy's rounding rule); points outside
// [edges[0], last] are in no bin. Bins are resolved here by a lookup table over equal cells
// of the edges' span and a walk of a few exact key comparisons (a binary search where the
// walk is long), so no label array is ever written.
//
// Statistics, with the conventions of the range kernel (ranges.cc's per-range road):
// - folded ones (count, sum, mean, var, std, sem, min, max, first, last, skew, kurt): one pass
//   accumulates every bin's counts, sum, extremes and the sum of deviations from the bin's
//   first finite point, in point order; a second pass (var/std/sem/skew/kurt) the central
//   moments about the bin's mean: never a difference of running sums, and a bin's result
//   depends on its own points only (in their order);
// - order ones (median, quantile): the points grouped by bin (a counting sort, stable, skipped
//   where the labels already ascend) and a selection per bin, order.cc's: bit for bit the
//   reference road's.
// Mode 2 (sorted x) finds each bin's index range by a binary search per edge and runs the
// range kernel on them (ranges.cc, order.cc): the same bits as the native range road.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

#include "kernels.h"
#include "partial.h"

namespace jaxsubset {
namespace {

ffi::Error bad(const std::string& what) {
  return ffi::Error::InvalidArgument("jaxsubset_bin_stats: " + what);
}

template <typename TX>
struct KeyOf;
template <>
struct KeyOf<double> {
  using K = int64_t;
};
template <>
struct KeyOf<float> {
  using K = int32_t;
};

// resolve/_keys.keys: the bits as a signed int, negative values' magnitude bits flipped,
// -0.0 as +0.0
template <typename TX>
inline typename KeyOf<TX>::K key(TX v) {
  using K = typename KeyOf<TX>::K;
  K b;
  std::memcpy(&b, &v, sizeof b);
  if (b == std::numeric_limits<K>::min()) return 0;
  return b < 0 ? (b ^ std::numeric_limits<K>::max()) : b;
}

// _binned.around: numpy.around(v, dec) in TX, p = 10**min(|dec|, top) rounded to TX (the
// table of 40 powers, indexed with JAX's clamped gather: top 39 for float64, 38 for float32)
template <typename TX>
inline TX around(TX v, int32_t dec) {
  static const double pow10[40] = {
      1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11, 1e12, 1e13,
      1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27,
      1e28, 1e29, 1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39};
  const int64_t top = sizeof(TX) == 4 ? 38 : 39;
  const int64_t a = dec < 0 ? -static_cast<int64_t>(dec) : dec;
  const TX p = static_cast<TX>(pow10[a < top ? a : top]);
  return dec >= 0 ? std::nearbyint(v * p) / p : std::nearbyint(v / p) * p;
}

// The edges of one batch item and the bin rule.
template <typename TX>
class Edges {
 public:
  using K = typename KeyOf<TX>::K;

  Edges(const TX* e, int64_t nbins, int32_t dec) : nb_(nbins), dec_(dec), ke_(nbins + 4) {
    // ke_[i]: the key of edge i - 1, with sentinels below and above every key (two above: a
    // NaN whose key is the largest steps onto the first and is checked against the second)
    ke_[0] = std::numeric_limits<K>::min();
    for (int64_t k = 0; k <= nb_; ++k) ke_[k + 1] = key(e[k]);
    ke_[nb_ + 2] = ke_[nb_ + 3] = std::numeric_limits<K>::max();
    last_r_ = around(e[nb_], dec_);
    // the table: the answer at the lower boundary of m equal cells of [e0, e_last], a whole
    // number per bin (equal-width bins: cells aligned with the edges); a guess only, every
    // answer is made exact in keys
    m_ = nb_ * std::max<int64_t>(1, std::min<int64_t>(4, (int64_t{1} << 20) / nb_));
    lo_ = static_cast<double>(e[0]);
    const double span = static_cast<double>(e[nb_]) - lo_;
    scale_ = span > 0 && std::isfinite(span) ? static_cast<double>(m_) / span : 0.0;
    table_.resize(m_ + 2);
    table_[0] = 0;
    table_[m_ + 1] = static_cast<int32_t>(nb_ + 1);
    for (int64_t j = 0; j < m_; ++j) {
      const double c = scale_ > 0 ? lo_ + static_cast<double>(j) / scale_ : lo_;
      table_[j + 1] = static_cast<int32_t>(search(key(static_cast<TX>(c))));
    }
  }

  // the number of edges at or below x (0 .. nb + 1), SciPy's last-edge rule applied. NaN
  // lies in no bin (0 or nb + 1 by its sign bit: binnumber says nb + 1, the same for every
  // statistic: in no bin)
  int64_t bin(TX x) const {
    const K kx = key(x);
    double t = (static_cast<double>(x) - lo_) * scale_;
    t = t < 0 ? -1.0 : t;                            // below: cell -1 (NaN stays NaN)
    t = t < static_cast<double>(m_) ? t : static_cast<double>(m_);  // above, NaN: m
    int64_t d = table_[static_cast<int64_t>(t + 1.0)];
    // one step each way without branches (the table's cell holds at most one edge for
    // equal-width bins), then the exact check: edge d - 1 at or below x, edge d above it
    d += kx >= ke_[d + 1];
    d -= kx < ke_[d];
    if (!(ke_[d] <= kx && kx < ke_[d + 1])) d = search(kx);
    return d == nb_ + 1 ? rule(x, d) : d;
  }

  // the first index of ascending x (n points) whose key is at or above edge k's
  int64_t lower(const TX* x, int64_t n, int64_t k) const {
    int64_t lo = 0, hi = n;
    const K e = ke_[k + 1];
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (key(x[mid]) < e) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  // ascending x: the end of the last bin, from the first index at or above the last edge
  // (the points SciPy's rule moves into the last bin are the first run there: around is
  // monotone)
  int64_t last_end(const TX* x, int64_t n, int64_t at) const {
    while (at < n && !std::isnan(x[at]) && around(x[at], dec_) == last_r_) ++at;
    return at;
  }

 private:
  // the number of edges whose keys are at or below kx
  int64_t search(K kx) const {
    return std::upper_bound(ke_.begin() + 1, ke_.begin() + nb_ + 2, kx) - (ke_.begin() + 1);
  }
  int64_t rule(TX x, int64_t d) const {
    return d == nb_ + 1 && around(x, dec_) == last_r_ ? nb_ : d;
  }

  int64_t nb_;
  int32_t dec_;
  std::vector<K> ke_;  // nb + 4: a sentinel, the edges' keys, two sentinels
  TX last_r_;
  int64_t m_;
  double lo_, scale_;
  std::vector<int32_t> table_;
};

// Every bin's partials of one channel, structure of arrays.
struct Acc {
  std::vector<int64_t> n, nan, pinf, ninf, first, last;
  std::vector<double> sum, mn, mx, c, zs, m2, m3, m4;
  std::vector<char> has;
  void reset(int64_t nb, bool mom, bool ends) {
    n.assign(nb, 0);
    nan.assign(nb, 0);
    pinf.assign(nb, 0);
    ninf.assign(nb, 0);
    sum.assign(nb, 0.0);
    mn.assign(nb, INFINITY);
    mx.assign(nb, -INFINITY);
    if (mom) {
      c.assign(nb, 0.0);
      zs.assign(nb, 0.0);
      has.assign(nb, 0);
      m2.assign(nb, 0.0);
      m3.assign(nb, 0.0);
      m4.assign(nb, 0.0);
    }
    if (ends) {
      first.assign(nb, -1);
      last.assign(nb, -1);
    }
  }
};

// the first pass: counts, sums, extremes, deviations from each bin's first finite point,
// first/last (with omit: non-NaN) points; lab(i) is point i's bin (outside 0..nb-1: none)
template <typename T, bool SUM, bool EXT, bool MOM, bool ENDS, typename Lab>
void accumulate(const T* yc, int64_t C, int64_t N, int64_t nb, const Lab& lab, Acc& a, bool omit) {
  int64_t* n = a.n.data();
  double* sum = a.sum.data();
  double* mn = a.mn.data();
  double* mx = a.mx.data();
  for (int64_t i = 0; i < N; ++i) {
    const int64_t b = lab(i);
    if (static_cast<uint64_t>(b) >= static_cast<uint64_t>(nb)) continue;
    const double x = static_cast<double>(yc[i * C]);
    ++n[b];
    if (std::isfinite(x)) {
      if constexpr (SUM) sum[b] += x;
      if constexpr (EXT) {
        mn[b] = x < mn[b] ? x : mn[b];
        mx[b] = x > mx[b] ? x : mx[b];
      }
      if constexpr (MOM) {
        if (!a.has[b]) {
          a.c[b] = x;
          a.has[b] = 1;
        }
        a.zs[b] += x - a.c[b];
      }
    } else if (std::isnan(x)) {
      ++a.nan[b];
    } else {
      if (x > 0) {
        ++a.pinf[b];
      } else {
        ++a.ninf[b];
      }
      if constexpr (EXT) {
        mn[b] = x < mn[b] ? x : mn[b];
        mx[b] = x > mx[b] ? x : mx[b];
      }
    }
    if constexpr (ENDS) {
      if (!omit || !std::isnan(x)) {
        if (a.first[b] < 0) a.first[b] = i;
        a.last[b] = i;
      }
    }
  }
}

// the second pass: central moments about each bin's mean (as ranges.cc: (x - c) - mean(x - c))
template <typename T, bool M4, typename Lab>
void moments(const T* yc, int64_t C, int64_t N, int64_t nb, const Lab& lab, Acc& a) {
  std::vector<double> mz(nb, 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t nf = a.n[b] - a.nan[b] - a.pinf[b] - a.ninf[b];
    mz[b] = nf > 0 ? a.zs[b] / static_cast<double>(nf) : 0.0;
  }
  for (int64_t i = 0; i < N; ++i) {
    const int64_t b = lab(i);
    if (static_cast<uint64_t>(b) >= static_cast<uint64_t>(nb)) continue;
    const double x = static_cast<double>(yc[i * C]);
    if (!std::isfinite(x)) continue;
    const double d = (x - a.c[b]) - mz[b];
    const double d2 = d * d;
    a.m2[b] += d2;
    if constexpr (M4) {
      a.m3[b] += d2 * d;
      a.m4[b] += d2 * d2;
    }
  }
}

template <typename T, typename Lab>
void folded_labels(const T* y, int64_t C, int64_t ch, int64_t N, int64_t nb, const Lab& lab,
                   const std::vector<Out>& outs, bool omit, int64_t ddof, Acc& a) {
  bool mom2 = false, mom4 = false, sum = false, ext = false, ends = false;
  for (const Out& o : outs) {
    switch (o.stat) {
      case kVar: case kStd: case kSem: mom2 = true; break;
      case kSkew: case kKurt: mom4 = true; break;
      case kSum: case kMean: sum = true; break;
      case kMin: case kMax: ext = true; break;
      case kFirst: case kLast: ends = true; break;
      default: break;
    }
  }
  const bool mom = mom2 || mom4;
  a.reset(nb, mom, ends);
  const T* yc = y + ch;
  // the flags as template arguments: one tight loop per combination asked
  auto go = [&](auto s, auto e, auto m, auto f) {
    accumulate<T, decltype(s)::value, decltype(e)::value, decltype(m)::value,
               decltype(f)::value>(yc, C, N, nb, lab, a, omit);
  };
  using Y = std::true_type;
  using No = std::false_type;
  auto go3 = [&](auto s, auto e, auto m) {
    if (ends) go(s, e, m, Y{}); else go(s, e, m, No{});
  };
  auto go2 = [&](auto s, auto e) {
    if (mom) go3(s, e, Y{}); else go3(s, e, No{});
  };
  auto go1 = [&](auto s) {
    if (ext) go2(s, Y{}); else go2(s, No{});
  };
  if (sum) go1(Y{}); else go1(No{});
  if (mom4) {
    moments<T, true>(yc, C, N, nb, lab, a);
  } else if (mom2) {
    moments<T, false>(yc, C, N, nb, lab, a);
  }
  for (int64_t b = 0; b < nb; ++b) {
    Partial p;
    p.n_all = a.n[b];
    p.nan = a.nan[b];
    p.pinf = a.pinf[b];
    p.ninf = a.ninf[b];
    p.nf = p.n_all - p.nan - p.pinf - p.ninf;
    p.sum = a.sum[b];
    p.mn = a.mn[b];
    p.mx = a.mx[b];
    if (mom && p.nf > 0) {
      p.m2 = a.m2[b];
      p.m3 = a.m3[b];
      p.m4 = a.m4[b];
    }
    for (const Out& o : outs) {
      if (is_order(o.stat)) continue;
      if (o.stat == kCount) {
        o.put_count(b, C, ch, omit ? p.n_all - p.nan : p.n_all);
      } else if (o.stat == kFirst || o.stat == kLast) {
        const int64_t i = o.stat == kFirst ? a.first[b] : a.last[b];
        o.put<T>(b, C, ch, i < 0 ? nan_v<T>() : yc[i * C]);
      } else {
        o.put<T>(b, C, ch, finish<T>(o.stat, p, omit, ddof));
      }
    }
  }
}

// median/quantile: the points grouped by bin (stable counting sort, every channel at once)
// unless the labels ascend (then every bin is an index range of y itself), then order.cc's
// selection per bin
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
  std::vector<int64_t> start(nb + 1, 0), count(nb, 0);
  bool ascending = true;
  int64_t prev = -1, lo = -1;  // lo: the first point in a bin (ascending labels)
  for (int64_t i = 0; i < N; ++i) {
    int64_t b = lab(i);
    const bool in = static_cast<uint64_t>(b) < static_cast<uint64_t>(nb);
    if (in) {
      ++count[b];
      if (lo < 0) lo = i;
    }
    // ascending: the points in no bin only before (label < 0) or after (label >= nb) them
    const int64_t rank = b < 0 ? -1 : (in ? b : nb);
    ascending &= rank >= prev;
    prev = rank;
  }
  if (ascending) {
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
  const int64_t total = s;
  std::vector<T> ys(static_cast<size_t>(total * C));
  std::vector<int64_t> at(start.begin(), start.begin() + nb);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t b = lab(i);
    if (static_cast<uint64_t>(b) >= static_cast<uint64_t>(nb)) continue;
    const int64_t j = at[b]++;
    for (int64_t ch = 0; ch < C; ++ch) ys[j * C + ch] = y[i * C + ch];
  }
  for (int64_t ch = 0; ch < C; ++ch) {
    order_bins<T>(ys.data(), C, ch, start.data(), count.data(), nb, outs, omit, nan_last);
  }
}

template <typename T, typename Lab>
void stats_by_labels(const T* y, int64_t C, int64_t N, int64_t nb, const Lab& lab,
                     const std::vector<Out>& outs, bool omit, int64_t ddof, bool nan_last) {
  std::vector<Out> folded, order;
  for (const Out& o : outs) (is_order(o.stat) ? order : folded).push_back(o);
  if (!folded.empty()) {
    Acc a;
    for (int64_t ch = 0; ch < C; ++ch) folded_labels<T>(y, C, ch, N, nb, lab, folded, omit, ddof, a);
  }
  if (!order.empty()) order_by_labels<T>(y, C, N, nb, lab, order, omit, nan_last);
}

// the folded statistics of the bins [start[k], start[k] + count[k]) of ascending x
template <typename T, bool SUM, bool EXT, int MOM>
void sorted_folded(const T* y, int64_t C, int64_t ch, const int64_t* start, const int64_t* count,
                   int64_t nb, const std::vector<Out>& outs, bool omit, int64_t ddof) {
  const T* yc = y + ch;
  for (int64_t k = 0; k < nb; ++k) {
    const int64_t s = start[k], e = s + count[k];
    const Partial p = range_partial<T, SUM, EXT, MOM>(yc, C, s, e);
    for (const Out& o : outs) {
      if (is_order(o.stat)) continue;
      if (o.stat == kCount) {
        o.put_count(k, C, ch, omit ? p.n_all - p.nan : p.n_all);
      } else if (o.stat == kFirst || o.stat == kLast) {
        // with omit the first/last non-NaN point, else the first/last point
        T v = nan_v<T>();
        if (o.stat == kFirst) {
          for (int64_t i = s; i < e; ++i) {
            if (!omit || !std::isnan(yc[i * C])) {
              v = yc[i * C];
              break;
            }
          }
        } else {
          for (int64_t i = e; i-- > s;) {
            if (!omit || !std::isnan(yc[i * C])) {
              v = yc[i * C];
              break;
            }
          }
        }
        o.put<T>(k, C, ch, v);
      } else {
        o.put<T>(k, C, ch, finish<T>(o.stat, p, omit, ddof));
      }
    }
  }
}

template <typename T>
void sorted_folded_any(const T* y, int64_t C, int64_t ch, const int64_t* start,
                       const int64_t* count, int64_t nb, const std::vector<Out>& outs, bool omit,
                       int64_t ddof) {
  bool mom2 = false, mom4 = false, sum = false, ext = false;
  for (const Out& o : outs) {
    switch (o.stat) {
      case kVar: case kStd: case kSem: mom2 = true; break;
      case kSkew: case kKurt: mom4 = true; break;
      case kSum: case kMean: sum = true; break;
      case kMin: case kMax: ext = true; break;
      default: break;
    }
  }
  auto go = [&](auto mom) {
    constexpr int M = decltype(mom)::value;
    if (sum && ext) {
      sorted_folded<T, true, true, M>(y, C, ch, start, count, nb, outs, omit, ddof);
    } else if (sum) {
      sorted_folded<T, true, false, M>(y, C, ch, start, count, nb, outs, omit, ddof);
    } else if (ext) {
      sorted_folded<T, false, true, M>(y, C, ch, start, count, nb, outs, omit, ddof);
    } else {
      sorted_folded<T, false, false, M>(y, C, ch, start, count, nb, outs, omit, ddof);
    }
  };
  if (mom4) {
    go(std::integral_constant<int, 4>{});
  } else if (mom2) {
    go(std::integral_constant<int, 2>{});
  } else {
    go(std::integral_constant<int, 0>{});
  }
}

// ascending x: every bin's index range by a binary search per edge, then a vectorised pass
// per bin (the order statistics: a selection per bin, order.cc's)
template <typename T, typename TX>
void stats_sorted(const T* y, int64_t C, int64_t N, const TX* x, const Edges<TX>& e, int64_t nb,
                  const std::vector<Out>& outs, bool omit, int64_t ddof, bool nan_last) {
  std::vector<int64_t> b(nb + 1), start(nb), count(nb);
  for (int64_t k = 0; k <= nb; ++k) b[k] = e.lower(x, N, k);
  b[nb] = e.last_end(x, N, b[nb]);
  for (int64_t k = 0; k < nb; ++k) {
    start[k] = b[k];
    count[k] = std::max<int64_t>(b[k + 1] - b[k], 0);
  }
  bool folded = false, order = false;
  for (const Out& o : outs) (is_order(o.stat) ? order : folded) = true;
  for (int64_t ch = 0; ch < C; ++ch) {
    if (folded) sorted_folded_any<T>(y, C, ch, start.data(), count.data(), nb, outs, omit, ddof);
    if (order) order_bins<T>(y, C, ch, start.data(), count.data(), nb, outs, omit, nan_last);
  }
}

template <typename T, typename S>
ffi::Error run(ffi::AnyBuffer y, ffi::AnyBuffer src, ffi::AnyBuffer edges, ffi::AnyBuffer dec,
               ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
               ffi::Span<const double> qs, bool omit, int64_t ddof, int64_t mode) {
  const bool nan_last = (mode & 4) != 0;  // SciPy's propagate median (see order_bins)
  mode &= 3;
  constexpr bool is_x = std::is_floating_point_v<S>;
  if (is_x != (mode != 0)) return bad("mode 0 takes int labels, modes 1 and 2 float x");
  auto ydims = y.dimensions();
  if (ydims.size() < 2) return bad("y must be (*batch, N, C)");
  const size_t nbd = ydims.size() - 2;
  const int64_t N = ydims[nbd], C = ydims[nbd + 1];
  auto sdims = src.dimensions();
  if (sdims.size() != nbd + 1 || sdims[nbd] != N) return bad("src must be (*batch, N)");
  auto edims = edges.dimensions();
  auto ddims = dec.dimensions();
  if (edims.size() != nbd + 1 || ddims.size() != nbd + 1) return bad("edges, dec: (*batch, M)");
  if (dec.element_type() != ffi::DataType::S32) return bad("dec must be int32");
  if (rets.size() != stats.size() || stats.size() == 0) return bad("one result per statistic");
  std::vector<Out> outs(stats.size());
  std::vector<int64_t> bdims(nbd, 1);
  int64_t K = -1;
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nbd + 2 || rdims[nbd + 1] != C) return bad("results must be (*batch, K, C)");
    if (K >= 0 && rdims[nbd] != K) return bad("every result has the same number of bins");
    K = rdims[nbd];
    for (size_t d = 0; d < nbd; ++d) bdims[d] = rdims[d];
    outs[i].base = (*res)->untyped_data();
    outs[i].stat = stats[i];
    outs[i].q = i < qs.size() ? qs[i] : 0.0;
    outs[i].integer = stats[i] == kCount;
    outs[i].i64 = (*res)->element_type() == ffi::DataType::S64;
    if (stats[i] < 0 || stats[i] >= kNumStats) return bad("unknown statistic code");
  }
  if (is_x) {
    if (edims[nbd] != K + 1) return bad("edges must hold K + 1 edges");
    if (edges.element_type() != src.element_type()) return bad("edges must have x's dtype");
  }
  if (ddims[nbd] != 1) return bad("dec must be (*batch, 1)");
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nbd, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto smap = BatchMap::make(sdims, nbd, bdims, N, "src");
  if (!smap.has_value()) return smap.error();
  auto emap = BatchMap::make(edims, nbd, bdims, edims[nbd], "edges");
  if (!emap.has_value()) return emap.error();
  auto dmap = BatchMap::make(ddims, nbd, bdims, 1, "dec");
  if (!dmap.has_value()) return dmap.error();
  const T* ybase = static_cast<const T*>(y.untyped_data());
  const S* sbase = static_cast<const S*>(src.untyped_data());
  std::vector<Out> item(outs);
  for (int64_t b = 0; b < B; ++b) {
    for (size_t i = 0; i < outs.size(); ++i) {
      const size_t width = outs[i].integer ? (outs[i].i64 ? 8 : 4) : sizeof(T);
      item[i].base = static_cast<char*>(outs[i].base) + b * K * C * width;
    }
    const T* yb = ybase + ymap->offset(b);
    const S* sb = sbase + smap->offset(b);
    if constexpr (is_x) {
      const S* eb = static_cast<const S*>(edges.untyped_data()) + emap->offset(b);
      const int32_t db = static_cast<const int32_t*>(dec.untyped_data())[dmap->offset(b)];
      Edges<S> e(eb, K, db);
      if (mode == 2) {
        stats_sorted<T, S>(yb, C, N, sb, e, K, item, omit, ddof, nan_last);
      } else {
        // a second pass over the labels (moments, order statistics, other channels): the
        // labels resolved once, kept; else resolved in the one pass
        bool again = C > 1;
        for (const Out& o : item) {
          again |= is_order(o.stat) || o.stat == kVar || o.stat == kStd || o.stat == kSem ||
                   o.stat == kSkew || o.stat == kKurt;
        }
        if (again && K < std::numeric_limits<int32_t>::max()) {
          std::vector<int32_t> labs(static_cast<size_t>(N));
          for (int64_t i = 0; i < N; ++i) labs[i] = static_cast<int32_t>(e.bin(sb[i]) - 1);
          auto lab = [&](int64_t i) -> int64_t { return labs[i]; };
          stats_by_labels<T>(yb, C, N, K, lab, item, omit, ddof, nan_last);
        } else {
          auto lab = [&](int64_t i) -> int64_t { return e.bin(sb[i]) - 1; };
          stats_by_labels<T>(yb, C, N, K, lab, item, omit, ddof, nan_last);
        }
      }
    } else {
      auto lab = [&](int64_t i) -> int64_t { return static_cast<int64_t>(sb[i]); };
      stats_by_labels<T>(yb, C, N, K, lab, item, omit, ddof, nan_last);
    }
  }
  return ffi::Error::Success();
}

template <typename T>
ffi::Error by_src(ffi::AnyBuffer y, ffi::AnyBuffer src, ffi::AnyBuffer edges, ffi::AnyBuffer dec,
                  ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
                  ffi::Span<const double> qs, bool omit, int64_t ddof, int64_t mode) {
  switch (src.element_type()) {
    case ffi::DataType::S32:
      return run<T, int32_t>(y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    case ffi::DataType::S64:
      return run<T, int64_t>(y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    case ffi::DataType::F32:
      return run<T, float>(y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    case ffi::DataType::F64:
      return run<T, double>(y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    default:
      return bad("src must be int32/int64 labels or float32/float64 x");
  }
}

ffi::Error BinStatsImpl(ffi::AnyBuffer y, ffi::AnyBuffer src, ffi::AnyBuffer edges,
                        ffi::AnyBuffer dec, ffi::RemainingRets rets,
                        ffi::Span<const int64_t> stats, ffi::Span<const double> qs, int64_t omit,
                        int64_t ddof, int64_t mode) {
  if ((mode & 3) > 2 || mode < 0 || mode > 7) return bad("mode must be 0, 1 or 2 (+ 4)");
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return by_src<float>(y, src, edges, dec, rets, stats, qs, omit != 0, ddof, mode);
    case ffi::DataType::F64:
      return by_src<double>(y, src, edges, dec, rets, stats, qs, omit != 0, ddof, mode);
    default:
      return bad("y must be float32 or float64");
  }
}


// jaxsubset_binnumber(x, edges, dec) -> d: _binned.binnumber of float x against edges of its
// dtype, EXACTLY (the rule of Edges::bin above; NaN: nb + 1 whatever its sign bit)
//   x (*B, N) float32/float64, edges (*B, K + 1) x's dtype, dec (*B, 1) int32
//   d (*B, N) int32/int64: 0 below the first edge, nb + 1 above the last, else 1..nb
// A call of its own, so XLA drops it where the bin numbers are not read.
template <typename TX, typename TD>
ffi::Error binnumber_run(ffi::AnyBuffer x, ffi::AnyBuffer edges, ffi::AnyBuffer dec,
                         ffi::AnyBuffer out) {
  auto odims = out.dimensions();
  if (odims.size() < 1) return bad("binnumber: the result must be (*batch, N)");
  const size_t nbd = odims.size() - 1;
  const int64_t N = odims[nbd];
  auto xdims = x.dimensions(), edims = edges.dimensions(), ddims = dec.dimensions();
  if (xdims.size() != nbd + 1 || xdims[nbd] != N) return bad("binnumber: x must be (*batch, N)");
  if (edims.size() != nbd + 1 || ddims.size() != nbd + 1 || ddims[nbd] != 1)
    return bad("binnumber: edges (*batch, K + 1), dec (*batch, 1)");
  if (edges.element_type() != x.element_type()) return bad("binnumber: edges must have x's dtype");
  if (dec.element_type() != ffi::DataType::S32) return bad("binnumber: dec must be int32");
  const int64_t K = edims[nbd] - 1;
  if (K < 1) return bad("binnumber: at least two edges");
  std::vector<int64_t> bdims(odims.begin(), odims.begin() + nbd);
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto xmap = BatchMap::make(xdims, nbd, bdims, N, "x");
  if (!xmap.has_value()) return xmap.error();
  auto emap = BatchMap::make(edims, nbd, bdims, K + 1, "edges");
  if (!emap.has_value()) return emap.error();
  auto dmap = BatchMap::make(ddims, nbd, bdims, 1, "dec");
  if (!dmap.has_value()) return dmap.error();
  const TX* xbase = static_cast<const TX*>(x.untyped_data());
  TD* obase = static_cast<TD*>(out.untyped_data());
  for (int64_t b = 0; b < B; ++b) {
    const TX* xb = xbase + xmap->offset(b);
    const TX* eb = static_cast<const TX*>(edges.untyped_data()) + emap->offset(b);
    const int32_t db = static_cast<const int32_t*>(dec.untyped_data())[dmap->offset(b)];
    Edges<TX> e(eb, K, db);
    TD* ob = obase + b * N;
    for (int64_t i = 0; i < N; ++i) {
      ob[i] = static_cast<TD>(std::isnan(xb[i]) ? K + 1 : e.bin(xb[i]));
    }
  }
  return ffi::Error::Success();
}

template <typename TX>
ffi::Error binnumber_by_out(ffi::AnyBuffer x, ffi::AnyBuffer edges, ffi::AnyBuffer dec,
                            ffi::AnyBuffer out) {
  switch (out.element_type()) {
    case ffi::DataType::S32:
      return binnumber_run<TX, int32_t>(x, edges, dec, out);
    case ffi::DataType::S64:
      return binnumber_run<TX, int64_t>(x, edges, dec, out);
    default:
      return bad("binnumber: the result must be int32 or int64");
  }
}

ffi::Error BinnumberImpl(ffi::AnyBuffer x, ffi::AnyBuffer edges, ffi::AnyBuffer dec,
                         ffi::Result<ffi::AnyBuffer> out) {
  switch (x.element_type()) {
    case ffi::DataType::F32:
      return binnumber_by_out<float>(x, edges, dec, *out);
    case ffi::DataType::F64:
      return binnumber_by_out<double>(x, edges, dec, *out);
    default:
      return bad("binnumber: x must be float32 or float64");
  }
}

}  // namespace
}  // namespace jaxsubset

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetBinStats, jaxsubset::BinStatsImpl,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()  // y
                                  .Arg<xla::ffi::AnyBuffer>()  // src: labels or x
                                  .Arg<xla::ffi::AnyBuffer>()  // edges
                                  .Arg<xla::ffi::AnyBuffer>()  // dec
                                  .RemainingRets()
                                  .Attr<xla::ffi::Span<const int64_t>>("stats")
                                  .Attr<xla::ffi::Span<const double>>("qs")
                                  .Attr<int64_t>("omit")
                                  .Attr<int64_t>("ddof")
                                  .Attr<int64_t>("mode"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetBinnumber, jaxsubset::BinnumberImpl,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // edges
                                  .Arg<xla::ffi::AnyBuffer>()  // dec
                                  .Ret<xla::ffi::AnyBuffer>());  // d
