// The folded statistics of the bins kernel (bins.cc): count, sum, mean, var, std, sem, min,
// max, first, last, skew, kurt per bin, from the points' labels (any order: one pass of
// partials per bin, a second of central moments) or from ascending x (every bin an index
// range: range_partial, partial.h, the range kernel's formula). Conventions of ranges.cc's
// per-range road: never a difference of running sums, a bin's result depends on its own
// points only (in their order).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "bin_edges.h"
#include "bin_pieces.h"
#include "kernels.h"
#include "parallel.h"
#include "partial.h"

namespace jaxsubset {
namespace bins {

// Points are labelled in blocks: a source's get(i0, n, buf) gives the labels of points
// [i0, i0 + n), each a bin 0..nb-1 or nb (in no bin: every per-bin array holds one slot more,
// read by no result, so the passes need no test), in buf or in place.
constexpr int64_t kBlock = 64;
static_assert(kBlock == kPieceBlock, "pieces of points start on a block");

// labels given: any value outside 0..nb-1 in no bin
template <typename S>
struct GivenLabels {
  const S* src;
  int64_t nb;
  const int32_t* get(int64_t i0, int64_t n, int32_t* __restrict buf) const {
    // one unsigned comparison (a negative label is a huge one): a loop that vectorises
    using U = std::make_unsigned_t<S>;
    const S* __restrict s = src + i0;
    const S m = static_cast<S>(nb);
    for (int64_t i = 0; i < n; ++i) {
      buf[i] = static_cast<int32_t>(static_cast<U>(s[i]) < static_cast<U>(m) ? s[i] : m);
    }
    return buf;
  }
};

// bins resolved from x (Edges::labels)
template <typename TX>
struct XLabels {
  const TX* x;
  const Edges<TX>* e;
  const int32_t* get(int64_t i0, int64_t n, int32_t* buf) const {
    e->labels(x + i0, n, buf);
    return buf;
  }
};

// labels resolved once and kept (edges whose lookup is not the proven one, read again)
struct StoredLabels {
  const int32_t* lab;
  const int32_t* get(int64_t i0, int64_t, int32_t*) const { return lab + i0; }
};

// labels of fewer than 2**16 - 1 bins kept as they are read: the first pass's source (any)
// writes each point's label (its own piece's points: pieces write apart) for a second pass
// (Recorded), which reads 2 bytes a point where finding the bin again reads x (4 or 8)
template <typename Inner>
struct Recording {
  const Inner* in;
  uint16_t* out;
  const int32_t* get(int64_t i0, int64_t n, int32_t* buf) const {
    const int32_t* l = in->get(i0, n, buf);
    for (int64_t i = 0; i < n; ++i) out[i0 + i] = static_cast<uint16_t>(l[i]);
    return l;
  }
};

struct Recorded {
  const uint16_t* lab;
  const int32_t* get(int64_t i0, int64_t n, int32_t* __restrict buf) const {
    const uint16_t* __restrict l = lab + i0;
    for (int64_t i = 0; i < n; ++i) buf[i] = l[i];
    return buf;
  }
};

template <typename Lab, typename Again>
const auto& pick_again(const Lab& lab, const Again* again) {
  if constexpr (std::is_same_v<Lab, Again>) {
    return again != nullptr ? *again : lab;
  } else {
    return *again;
  }
}

// whether every one of n values (stride C) is finite: x - x is 0 for a finite x, NaN for a
// NaN or an inf (a sum of them in any order). Sixteen partial sums: the latency of one chain
// of additions, not their number, bounded the single sum.
template <typename T>
bool all_finite(const T* y, int64_t C, int64_t n) {
  constexpr int U = 16;
  T z[U] = {};
  int64_t i = 0;
  if (C == 1) {
    for (; i + U <= n; i += U) {
      for (int k = 0; k < U; ++k) z[k] += y[i + k] - y[i + k];
    }
  }
  for (; i < n; ++i) z[0] += y[i * C] - y[i * C];
  T t = 0;
  for (int k = 0; k < U; ++k) t += z[k];
  return t == 0;
}

// Every bin's partials of one channel, structure of arrays (nb + 1 slots, see above).
struct Acc {
  std::vector<int64_t> n, nan, pinf, ninf, first, last;
  std::vector<double> sum, mn, mx, c, zs, m2, m3, m4;
  std::vector<char> has;
  void reset(int64_t nb, bool mom, bool ends) {
    const size_t s = static_cast<size_t>(nb + 1);
    n.assign(s, 0);
    nan.assign(s, 0);
    pinf.assign(s, 0);
    ninf.assign(s, 0);
    sum.assign(s, 0.0);
    mn.assign(s, INFINITY);
    mx.assign(s, -INFINITY);
    if (mom) {
      c.assign(s, 0.0);
      zs.assign(s, 0.0);
      has.assign(s, 0);
      m2.assign(s, 0.0);
      m3.assign(s, 0.0);
      m4.assign(s, 0.0);
    }
    if (ends) {
      first.assign(s, -1);
      last.assign(s, -1);
    }
  }
};

// a non-finite point of bin b: counted (NaN, +inf, -inf), an infinity kept in the extremes
// asked for (EXT: 1 the minima, 2 the maxima)
template <int EXT>
inline void non_finite(Acc& a, int64_t b, double x) {
  if (std::isnan(x)) {
    ++a.nan[b];
    return;
  }
  ++(x > 0 ? a.pinf : a.ninf)[b];
  if constexpr ((EXT & 1) != 0) a.mn[b] = x < a.mn[b] ? x : a.mn[b];
  if constexpr ((EXT & 2) != 0) a.mx[b] = x > a.mx[b] ? x : a.mx[b];
}

// accumulate with first/last (see below): a block of finite values takes the loop without the
// tests of non-finite ones (the same operations in the same order: the same bits)
template <typename T, bool SUM, int EXT, bool MOM, typename Lab>
void accumulate_ends(const T* yc, int64_t C, int64_t lo, int64_t hi, const Lab& lab, Acc& a,
                     bool omit) {
  int64_t* n = a.n.data();
  double* sum = a.sum.data();
  double* mn = a.mn.data();
  double* mx = a.mx.data();
  int32_t buf[kBlock];
  for (int64_t i0 = lo; i0 < hi; i0 += kBlock) {
    const int64_t len = std::min(kBlock, hi - i0);
    const int32_t* lb = lab.get(i0, len, buf);
    const T* yb = yc + i0 * C;
    if (all_finite(yb, C, len)) {
      for (int64_t i = 0; i < len; ++i) {
        const int64_t b = lb[i];
        const double x = static_cast<double>(yb[i * C]);
        ++n[b];
        if constexpr (SUM) sum[b] += x;
        if constexpr ((EXT & 1) != 0) mn[b] = x < mn[b] ? x : mn[b];
        if constexpr ((EXT & 2) != 0) mx[b] = x > mx[b] ? x : mx[b];
        if constexpr (MOM) {
          if (!a.has[b]) {
            a.c[b] = x;
            a.has[b] = 1;
          }
          a.zs[b] += x - a.c[b];
        }
        if (a.first[b] < 0) a.first[b] = i0 + i;
        a.last[b] = i0 + i;
      }
      continue;
    }
    for (int64_t i = 0; i < len; ++i) {
      const int64_t b = lb[i];
      const double x = static_cast<double>(yb[i * C]);
      ++n[b];
      if (std::isfinite(x)) {
        if constexpr (SUM) sum[b] += x;
        if constexpr ((EXT & 1) != 0) mn[b] = x < mn[b] ? x : mn[b];
        if constexpr ((EXT & 2) != 0) mx[b] = x > mx[b] ? x : mx[b];
        if constexpr (MOM) {
          if (!a.has[b]) {
            a.c[b] = x;
            a.has[b] = 1;
          }
          a.zs[b] += x - a.c[b];
        }
      } else {
        non_finite<EXT>(a, b, x);
      }
      if (!omit || !std::isnan(x)) {
        if (a.first[b] < 0) a.first[b] = i0 + i;
        a.last[b] = i0 + i;
      }
    }
  }
}

// the first pass over the points [lo, hi) (a piece: lo a multiple of kBlock): counts, sums,
// extremes, deviations from each bin's first finite point (of the piece), first/last (with
// omit: non-NaN) points, every bin's points in point order. Without first/last every point
// takes one loop in which a non-finite value adds a neutral term (+0.0 to a sum that is never
// -0.0: it starts at +0.0, and x + y is -0.0 only where both are; +inf to the minima, -inf
// to the maxima; no shift), and the block's non-finite points, if any, are then counted
// (NaN, +-inf) and the infinities kept in the extremes (exact in any order): the finite
// points see the same operations in the same order as a loop that skipped the others, so the
// same bits, without a pass that looks for them first. EXT: 1 the minima, 2 the maxima, 3 both.
template <typename T, bool SUM, int EXT, bool MOM, bool ENDS, typename Lab>
void accumulate(const T* yc, int64_t C, int64_t lo, int64_t hi, const Lab& lab, Acc& a,
                bool omit) {
  if constexpr (ENDS) {
    accumulate_ends<T, SUM, EXT, MOM>(yc, C, lo, hi, lab, a, omit);
  } else {
    int64_t* n = a.n.data();
    double* sum = a.sum.data();
    double* mn = a.mn.data();
    double* mx = a.mx.data();
    double* c = MOM ? a.c.data() : nullptr;
    double* zs = MOM ? a.zs.data() : nullptr;
    char* has = MOM ? a.has.data() : nullptr;
    int32_t buf[kBlock];
    for (int64_t i0 = lo; i0 < hi; i0 += kBlock) {
      const int64_t len = std::min(kBlock, hi - i0);
      const int32_t* lb = lab.get(i0, len, buf);
      const T* yb = yc + i0 * C;
      bool bad = false;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t b = lb[i];
        const double x = static_cast<double>(yb[i * C]);
        const bool fin = x - x == 0;
        bad |= !fin;
        ++n[b];
        if constexpr (SUM) sum[b] += fin ? x : 0.0;
        if constexpr ((EXT & 1) != 0) {
          const double v = fin ? x : INFINITY;
          mn[b] = v < mn[b] ? v : mn[b];
        }
        if constexpr ((EXT & 2) != 0) {
          const double v = fin ? x : -INFINITY;
          mx[b] = v > mx[b] ? v : mx[b];
        }
        if constexpr (MOM) {
          if (fin && !has[b]) {
            c[b] = x;
            has[b] = 1;
          }
          zs[b] += fin ? x - c[b] : 0.0;
        }
      }
      if (!bad) continue;
      for (int64_t i = 0; i < len; ++i) {
        const double x = static_cast<double>(yb[i * C]);
        if (!std::isfinite(x)) non_finite<EXT>(a, lb[i], x);
      }
    }
  }
}

// the second pass over the points [lo, hi): central moments about each bin's mean (as
// ranges.cc: (x - c) - mean(x - c), c the bin's first finite point, mz the mean of x - c) of
// the finite points, added to `into`'s m2 (m3, m4)
template <typename T, bool M4, typename Lab>
void moments(const T* yc, int64_t C, int64_t lo, int64_t hi, const Lab& lab, const double* c,
             const double* mz, Acc& into) {
  double* m2 = into.m2.data();
  double* m3 = into.m3.data();
  double* m4 = into.m4.data();
  int32_t buf[kBlock];
  for (int64_t i0 = lo; i0 < hi; i0 += kBlock) {
    const int64_t len = std::min(kBlock, hi - i0);
    const int32_t* lb = lab.get(i0, len, buf);
    const T* yb = yc + i0 * C;
    for (int64_t i = 0; i < len; ++i) {
      const int64_t b = lb[i];
      const double x = static_cast<double>(yb[i * C]);
      // a non-finite point adds +0.0 (the sums start at +0.0 and are never -0.0)
      const double d = x - x == 0 ? (x - c[b]) - mz[b] : 0.0;
      const double d2 = d * d;
      m2[b] += d2;
      if constexpr (M4) {
        m3[b] += d2 * d;
        m4[b] += d2 * d2;
      }
    }
  }
}

// Piece q's first-pass partials added to `a` (the pieces before q, merged), in piece order:
// counts and sums added; the extremes kept as one pass keeps them (x < mn: of equal values
// the earlier stays), so exactly one pass's; first/last from the earliest/latest piece holding
// one; the deviations re-centred on the bin's first finite point of all (c), Chan's shift:
// zs += zs_q + nf_q * (c_q - c). Only the sums' order and that shift round otherwise than one
// pass over every point would; both depend on the pieces (the data's size), never on threads.
inline void merge_first(Acc& a, const Acc& q, int64_t nb, bool mom, bool ends) {
  for (int64_t b = 0; b <= nb; ++b) {
    a.n[b] += q.n[b];
    a.nan[b] += q.nan[b];
    a.pinf[b] += q.pinf[b];
    a.ninf[b] += q.ninf[b];
    a.sum[b] += q.sum[b];
    a.mn[b] = q.mn[b] < a.mn[b] ? q.mn[b] : a.mn[b];
    a.mx[b] = q.mx[b] > a.mx[b] ? q.mx[b] : a.mx[b];
    if (mom && q.has[b]) {
      if (!a.has[b]) {
        a.c[b] = q.c[b];
        a.zs[b] = q.zs[b];
        a.has[b] = 1;
      } else {
        const int64_t nf = q.n[b] - q.nan[b] - q.pinf[b] - q.ninf[b];
        a.zs[b] += q.zs[b] + static_cast<double>(nf) * (q.c[b] - a.c[b]);
      }
    }
    if (ends) {
      if (a.first[b] < 0) a.first[b] = q.first[b];
      if (q.last[b] >= 0) a.last[b] = q.last[b];
    }
  }
}

// the first pass over one piece of points, the flags as template arguments: one tight loop per
// combination asked (only the extremes asked are kept: one store less a point)
template <typename T, typename Lab>
void first_pass(const T* yc, int64_t C, int64_t lo, int64_t hi, const Lab& lab, Acc& a,
                bool omit, bool sum, int ext, bool mom, bool ends) {
  auto go = [&](auto s, auto e, auto m, auto f) {
    accumulate<T, decltype(s)::value, decltype(e)::value, decltype(m)::value,
               decltype(f)::value>(yc, C, lo, hi, lab, a, omit);
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
    using E = std::integral_constant<int, 0>;
    switch (ext) {
      case 1: go2(s, std::integral_constant<int, 1>{}); break;
      case 2: go2(s, std::integral_constant<int, 2>{}); break;
      case 3: go2(s, std::integral_constant<int, 3>{}); break;
      default: go2(s, E{}); break;
    }
  };
  if (sum) go1(Y{}); else go1(No{});
}

// The folded statistics of channel ch from labels in any order. The points are cut into
// pieces (point_pieces: by N and nb alone); each piece fills its own partials (pass one), which
// are merged in piece order (merge_first), then each piece adds the central moments of its
// points about the merged means into its own slots (pass two), added in piece order. One piece
// (small inputs) is exactly the one pass of before; any number of threads gives these bits.
// (The other cut, each piece owning a range of bins and reading every point, would keep one
// pass's bits for any size, but every thread would resolve every point's bin and branch on
// it, which costs more than the scatter it shares: pieces of points are what scale.)
// `lab` gives the first pass its labels and `again` the second's (the same labels: a source
// that records them as the first pass reads them, and the record; or the same source twice).
template <typename T, typename Lab, typename Again = Lab>
void folded_labels(xla::ffi::ThreadPool* pool, const T* y, int64_t C, int64_t ch, int64_t N,
                   int64_t nb, const Lab& lab, const std::vector<Out>& outs, bool omit,
                   int64_t ddof, const Again* again = nullptr) {
  bool mom2 = false, mom4 = false, sum = false, ends = false;
  int ext = 0;  // 1: min, 2: max
  for (const Out& o : outs) {
    switch (o.stat) {
      case kVar: case kStd: case kSem: mom2 = true; break;
      case kSkew: case kKurt: mom4 = true; break;
      case kSum: case kMean: sum = true; break;
      case kMin: ext |= 1; break;
      case kMax: ext |= 2; break;
      case kFirst: case kLast: ends = true; break;
      default: break;
    }
  }
  const bool mom = mom2 || mom4;
  const T* yc = y + ch;
  const PointPieces pp = point_pieces(N, nb);
  std::vector<Acc> parts(static_cast<size_t>(pp.count));
  for_pieces(pool, pp.count, [&](int64_t p) {
    parts[p].reset(nb, mom, ends);
    first_pass<T>(yc, C, pp.begin(p), pp.end(p, N), lab, parts[p], omit, sum, ext, mom, ends);
  });
  Acc& a = parts[0];
  for (int64_t p = 1; p < pp.count; ++p) merge_first(a, parts[p], nb, mom, ends);
  if (mom) {
    std::vector<double> mz(nb + 1, 0.0);
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t nf = a.n[b] - a.nan[b] - a.pinf[b] - a.ninf[b];
      mz[b] = nf > 0 ? a.zs[b] / static_cast<double>(nf) : 0.0;
    }
    // (piece 0 adds into a's own m2..m4, still zero: a's c is read, never written here)
    const auto& second = pick_again(lab, again);
    for_pieces(pool, pp.count, [&](int64_t p) {
      const int64_t lo = pp.begin(p), hi = pp.end(p, N);
      if (mom4) {
        moments<T, true>(yc, C, lo, hi, second, a.c.data(), mz.data(), parts[p]);
      } else {
        moments<T, false>(yc, C, lo, hi, second, a.c.data(), mz.data(), parts[p]);
      }
    });
    for (int64_t p = 1; p < pp.count; ++p) {
      for (int64_t b = 0; b < nb; ++b) {
        a.m2[b] += parts[p].m2[b];
        a.m3[b] += parts[p].m3[b];
        a.m4[b] += parts[p].m4[b];
      }
    }
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


// max and/or min alone of a bin of ascending x (channel stride 1): the extremes in y's own
// dtype (exact in any order, so range_partial's values), two 16-byte vectors of y's dtype at a
// time (GCC/Clang vector extensions: minps/maxps or minpd/maxpd on SSE2, one loop for float32
// and float64), no widening and no sum; false where a point is not finite (x - x is NaN for
// NaN and +-inf), then range_partial counts those
template <typename T>
bool plain_extremes(const T* y, int64_t s, int64_t e, double& mn, double& mx) {
  constexpr int L = 16 / sizeof(T);  // lanes of one vector
  typedef T V __attribute__((vector_size(16)));
  typedef decltype(V{} < V{}) M;  // a lane mask (all ones where true)
  T a = std::numeric_limits<T>::infinity(), b = -a;
  bool bad = false;
  int64_t i = s;
  if (e - s >= 2 * L) {
    V lo0 = a - V{}, lo1 = lo0, hi0 = b - V{}, hi1 = hi0;
    M u{};
    for (; i + 2 * L <= e; i += 2 * L) {
      V x0, x1;
      std::memcpy(&x0, y + i, sizeof(V));
      std::memcpy(&x1, y + i + L, sizeof(V));
      const V d0 = x0 - x0, d1 = x1 - x1;
      u |= (d0 != d0) | (d1 != d1);
      lo0 = lo0 < x0 ? lo0 : x0;  // minps/maxps's operand order (a tied zero's sign)
      lo1 = lo1 < x1 ? lo1 : x1;
      hi0 = hi0 > x0 ? hi0 : x0;
      hi1 = hi1 > x1 ? hi1 : x1;
    }
    const V lo[2] = {lo0, lo1}, hi[2] = {hi0, hi1};
    for (int k = 0; k < 2 * L; ++k) {  // the lanes in memory order
      a = lo[k / L][k % L] < a ? lo[k / L][k % L] : a;
      b = hi[k / L][k % L] > b ? hi[k / L][k % L] : b;
      bad |= u[k % L] != 0;
    }
  }
  for (; i < e; ++i) {
    const T x = y[i];
    bad |= !(x - x == T(0));
    a = x < a ? x : a;
    b = x > b ? x : b;
  }
  mn = static_cast<double>(a);
  mx = static_cast<double>(b);
  return !bad;
}

// the folded statistics of the bins [start[k], start[k] + count[k]) of ascending x
template <typename T, bool SUM, bool EXT, int MOM>
void sorted_folded(const T* y, int64_t C, int64_t ch, const int64_t* start, const int64_t* count,
                   int64_t nb, const std::vector<Out>& outs, bool omit, int64_t ddof) {
  const T* yc = y + ch;
  for (int64_t k = 0; k < nb; ++k) {
    const int64_t s = start[k], e = s + count[k];
    Partial p;
    if (EXT && !SUM && MOM == 0 && C == 1 && plain_extremes(yc, s, e, p.mn, p.mx)) {
      p.n_all = p.nf = e - s;
    } else {
      p = range_partial<T, SUM, EXT, MOM>(yc, C, s, e);
    }
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


}  // namespace bins
}  // namespace jaxsubset
