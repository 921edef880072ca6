// Folded statistics over index ranges: count, sum, mean, var, std, sem, min, max, first, last,
// skew, kurt, with the conventions of src/jaxsubset/_statistics/_registry.py.
//
// Exactness contract (as every road of the library): a range's result is combined only from
// partials of its own points, never a difference of running sums, so a value outside a range
// (1e30, inf, NaN) leaves it bit-identical, and a range of zeros is exactly 0.
//
// Two roads, chosen per call from the ranges alone (never from the values):
// - per range (any ranges; chunks, bins, selections): one pass for the counts, sum and
//   extremes, a second for the central moments about the range's mean (shifted by the range's
//   first finite point), as the reference road does;
// - a two-stack queue (both ends non-decreasing and ranges overlapping: windows): the front
//   stack holds the suffix partials of [i, mid), the back one the running partial of
//   [mid, stop); a range is front[start] (+) back, combined by Chan's/Pebay's formulas with
//   shifts that are points of each partial. Each point enters the back once and one front
//   once: O(N + K).
// Moments accumulate in double also for float32 input (results rounded once), sums of
// integers are exact below 2**53.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels.h"

namespace jaxsubset {

// Empty ranges are left out of both (their results are fixed: 0 or NaN), so padding a call
// with empty ranges (an eager call's buckets) never changes the road of the others.
bool Ranges::monotone() const {
  int64_t ps = -1, pe = -1;
  for (int64_t k = 0; k < K; ++k) {
    if (ct(k) == 0) continue;
    const int64_t s = st(k), e = s + ct(k);
    if (s < ps || e < pe) return false;
    ps = s;
    pe = e;
  }
  return true;
}

int64_t Ranges::span() const {
  int64_t lo = N, hi = 0;
  for (int64_t k = 0; k < K; ++k) {
    if (ct(k) == 0) continue;
    lo = std::min(lo, st(k));
    hi = std::max(hi, st(k) + ct(k));
  }
  return hi > lo ? hi - lo : 0;
}

bool Ranges::overlapping() const { return total() > 4 * span() && monotone(); }

int64_t Ranges::total() const {
  int64_t t = 0;
  for (int64_t k = 0; k < K; ++k) t += ct(k);
  return t;
}

int64_t Ranges::longest() const {
  int64_t t = 0;
  for (int64_t k = 0; k < K; ++k) t = std::max(t, ct(k));
  return t;
}

namespace {

// The partial of a run of points. MOM: 0 none, 2 (n, c, m, M2), 4 with M3, M4 (the shift c is
// one of the partial's own points); SUM: the plain sum of the finite points; EXT: min/max of
// the non-NaN points; NF: the data holds non-finite values (else the fast path skips the
// classification: every point is finite).
template <int MOM, bool SUM, bool EXT, bool NF>
struct Agg {
  int64_t n = 0;  // finite points
  double c = 0, m = 0, q = 0, r = 0, s = 0;
  double sum = 0;
  double mn = INFINITY, mx = -INFINITY;
  int64_t nan = 0, pinf = 0, ninf = 0;

  inline void add(double x) {
    if constexpr (NF) {
      if (std::isnan(x)) {
        ++nan;
        return;
      }
      if (std::isinf(x)) {
        if (x > 0) ++pinf; else ++ninf;
        if constexpr (EXT) {
          mn = std::min(mn, x);
          mx = std::max(mx, x);
        }
        return;
      }
    }
    ++n;
    if constexpr (SUM) sum += x;
    if constexpr (EXT) {
      mn = x < mn ? x : mn;
      mx = x > mx ? x : mx;
    }
    if constexpr (MOM > 0) {
      if (n == 1) {
        c = x;
        return;
      }
      const double nf = static_cast<double>(n);
      const double d = (x - c) - m;
      const double w = 1.0 / nf;
      if constexpr (MOM == 4) {
        // Pebay's combination with the one-point partial (1, x, 0, 0, 0, 0)
        const double na = nf - 1, v = na * w, d2 = d * d;
        const double naw = na * w;
        const double r0 = r, q0 = q;
        s += d2 * d2 * naw * (v * v - v * w + w * w) + 6 * d2 * (w * w * q0) - 4 * d * (w * r0);
        r += d2 * d * naw * (v - w) - 3 * d * (w * q0);
      }
      m += d * w;
      q += d * ((x - c) - m);
    }
  }
};

template <int MOM, bool SUM, bool EXT, bool NF>
inline Agg<MOM, SUM, EXT, NF> combine(const Agg<MOM, SUM, EXT, NF>& a,
                                     const Agg<MOM, SUM, EXT, NF>& b) {
  Agg<MOM, SUM, EXT, NF> o;
  o.n = a.n + b.n;
  if constexpr (NF) {
    o.nan = a.nan + b.nan;
    o.pinf = a.pinf + b.pinf;
    o.ninf = a.ninf + b.ninf;
  }
  if constexpr (SUM) o.sum = a.sum + b.sum;
  if constexpr (EXT) {
    o.mn = b.mn < a.mn ? b.mn : a.mn;
    o.mx = b.mx > a.mx ? b.mx : a.mx;
  }
  if constexpr (MOM > 0) {
    if (a.n == 0 || b.n == 0) {
      const auto& src = a.n == 0 ? b : a;
      o.c = src.c;
      o.m = src.m;
      o.q = src.q;
      o.r = src.r;
      o.s = src.s;
    } else {
      // Chan's formula (_moments.chan); Pebay's for M3, M4 (_tree.pebay)
      const double na = static_cast<double>(a.n), n = static_cast<double>(o.n);
      const double w = static_cast<double>(b.n) / n, v = 1 - w;
      const double d = (b.c - a.c) + (b.m - a.m);
      o.c = a.c;
      o.m = a.m + d * w;
      o.q = a.q + b.q + d * d * na * w;
      if constexpr (MOM == 4) {
        const double d2 = d * d, naw = na * w;
        o.r = a.r + b.r + d2 * d * naw * (v - w) + 3 * d * (v * b.q - w * a.q);
        o.s = a.s + b.s + d2 * d2 * naw * (v * v - v * w + w * w) +
              6 * d2 * (v * v * b.q + w * w * a.q) + 4 * d * (v * b.r - w * a.r);
      }
    }
  }
  return o;
}

template <int MOM, bool SUM, bool EXT, bool NF>
inline Partial to_partial(const Agg<MOM, SUM, EXT, NF>& a, int64_t n_all) {
  Partial p;
  p.n_all = n_all;
  p.nf = a.n;
  p.nan = a.nan;
  p.pinf = a.pinf;
  p.ninf = a.ninf;
  p.sum = a.sum;
  p.m2 = a.q;
  p.m3 = a.r;
  p.m4 = a.s;
  p.mn = a.mn;
  p.mx = a.mx;
  return p;
}

template <typename T>
inline void emit(const Partial& p, int64_t k, int64_t C, int64_t ch, const std::vector<Out>& outs,
                 bool omit, int64_t ddof) {
  for (const Out& o : outs) {
    if (o.stat == kCount) {
      o.put_count(k, C, ch, omit ? p.n_all - p.nan : p.n_all);
    } else if (o.stat != kFirst && o.stat != kLast) {
      o.put<T>(k, C, ch, finish<T>(o.stat, p, omit, ddof));
    }
  }
}

// The two-stack queue over ranges whose both ends are non-decreasing.
template <typename T, class A>
void queue_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                bool omit, int64_t ddof) {
  std::vector<A> front;  // front[i - base]: the partial of [i, mid)
  int64_t mid = 0, base = 0, hi = 0;
  A back;  // the partial of [mid, hi)
  const T* yc = y + ch;
  for (int64_t k = 0; k < r.K; ++k) {
    const int64_t s = r.st(k), e = s + r.ct(k);
    if (e == s) {  // left out of the queue (see Ranges::monotone)
      emit<T>(to_partial(A(), 0), k, C, ch, outs, omit, ddof);
      continue;
    }
    if (s >= mid) {
      // the front is used up: its points all left; rebuild it over this range
      front.resize(static_cast<size_t>(e - s));
      A a;
      for (int64_t i = e - 1; i >= s; --i) {
        a.add(static_cast<double>(yc[i * C]));
        front[static_cast<size_t>(i - s)] = a;
      }
      mid = hi = e;
      base = s;
      back = A();
    } else {
      for (; hi < e; ++hi) back.add(static_cast<double>(yc[hi * C]));
    }
    const A res = s < mid ? combine(front[static_cast<size_t>(s - base)], back) : back;
    emit<T>(to_partial(res, e - s), k, C, ch, outs, omit, ddof);
  }
}

// One range at a time: a pass for counts, sums and extremes, one for the central moments.
template <typename T, int MOM, bool SUM, bool EXT, bool NF>
void direct_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                 bool omit, int64_t ddof) {
  const T* yc = y + ch;
  for (int64_t k = 0; k < r.K; ++k) {
    const int64_t s = r.st(k), e = s + r.ct(k);
    Partial p;
    p.n_all = e - s;
    double sum = 0, mn = INFINITY, mx = -INFINITY, c = 0;
    int64_t nan = 0, pinf = 0, ninf = 0;
    int64_t first = s;  // the first finite point: the shift of the moments
    if constexpr (NF) {
      while (first < e && !std::isfinite(static_cast<double>(yc[first * C]))) ++first;
    }
    if (first < e) c = static_cast<double>(yc[first * C]);
    double zs = 0;
    for (int64_t i = s; i < e; ++i) {
      const double x = static_cast<double>(yc[i * C]);
      if constexpr (NF) {
        const bool isn = std::isnan(x), fin = std::isfinite(x);
        nan += isn;
        pinf += x == INFINITY;
        ninf += x == -INFINITY;
        if constexpr (EXT) {
          mn = (!isn && x < mn) ? x : mn;
          mx = (!isn && x > mx) ? x : mx;
        }
        sum += fin ? x : 0.0;
        zs += fin ? x - c : 0.0;
      } else {
        if constexpr (EXT) {
          mn = x < mn ? x : mn;
          mx = x > mx ? x : mx;
        }
        sum += x;
        zs += x - c;
      }
    }
    p.nan = nan;
    p.pinf = pinf;
    p.ninf = ninf;
    p.nf = p.n_all - nan - pinf - ninf;
    p.sum = sum;
    p.mn = mn;
    p.mx = mx;
    if constexpr (MOM > 0) {
      if (p.nf > 0) {
        const double mz = zs / static_cast<double>(p.nf);
        double m2 = 0, m3 = 0, m4 = 0;
        for (int64_t i = s; i < e; ++i) {
          const double x = static_cast<double>(yc[i * C]);
          double d = (x - c) - mz;
          if constexpr (NF) d = std::isfinite(x) ? d : 0.0;
          const double d2 = d * d;
          m2 += d2;
          if constexpr (MOM == 4) {
            m3 += d2 * d;
            m4 += d2 * d2;
          }
        }
        p.m2 = m2;
        p.m3 = m3;
        p.m4 = m4;
      }
    }
    emit<T>(p, k, C, ch, outs, omit, ddof);
  }
}

template <typename T, int MOM, bool SUM, bool EXT, bool NF>
void folded_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                 bool omit, int64_t ddof, bool queue) {
  if (queue) {
    queue_road<T, Agg<MOM, SUM, EXT, NF>>(y, C, ch, r, outs, omit, ddof);
  } else {
    direct_road<T, MOM, SUM, EXT, NF>(y, C, ch, r, outs, omit, ddof);
  }
}

template <typename T, int MOM, bool SUM, bool EXT>
void pick_nf(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
             bool omit, int64_t ddof, bool queue, bool nf) {
  if (nf) {
    folded_road<T, MOM, SUM, EXT, true>(y, C, ch, r, outs, omit, ddof, queue);
  } else {
    folded_road<T, MOM, SUM, EXT, false>(y, C, ch, r, outs, omit, ddof, queue);
  }
}

template <typename T, int MOM>
void pick_flags(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                bool omit, int64_t ddof, bool queue, bool nf, bool sum, bool ext) {
  if (sum && ext) {
    pick_nf<T, MOM, true, true>(y, C, ch, r, outs, omit, ddof, queue, nf);
  } else if (sum) {
    pick_nf<T, MOM, true, false>(y, C, ch, r, outs, omit, ddof, queue, nf);
  } else if (ext) {
    pick_nf<T, MOM, false, true>(y, C, ch, r, outs, omit, ddof, queue, nf);
  } else {
    pick_nf<T, MOM, false, false>(y, C, ch, r, outs, omit, ddof, queue, nf);
  }
}

// first/last: with omit the first/last non-NaN reading of the range, else its first/last
// point (NaN if that is NaN); NaN for an empty range.
template <typename T>
void ends(const T* y, int64_t C, int64_t ch, const Ranges& r, const Out& o, bool omit,
          bool monotone) {
  const T* yc = y + ch;
  const bool first = o.stat == kFirst;
  int64_t p = 0, hi = 0, last_good = -1;  // monotone pointers (omit)
  for (int64_t k = 0; k < r.K; ++k) {
    const int64_t s = r.st(k), e = s + r.ct(k);
    T v = nan_v<T>();
    if (e > s) {
      if (!omit) {
        v = yc[(first ? s : e - 1) * C];
      } else if (first) {
        if (!monotone) p = s;
        p = std::max(p, s);
        while (p < e && std::isnan(yc[p * C])) ++p;
        if (p < e) v = yc[p * C];
      } else if (monotone) {
        for (; hi < e; ++hi) {
          if (!std::isnan(yc[hi * C])) last_good = hi;
        }
        if (last_good >= s) v = yc[last_good * C];
      } else {
        int64_t i = e - 1;
        while (i >= s && std::isnan(yc[i * C])) --i;
        if (i >= s) v = yc[i * C];
      }
    }
    o.put<T>(k, C, ch, v);
  }
}

}  // namespace

template <typename T>
void folded_ranges(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                   bool omit, int64_t ddof) {
  bool mom2 = false, mom4 = false, sum = false, ext = false, any = false;
  for (const Out& o : outs) {
    switch (o.stat) {
      case kVar: case kStd: case kSem: mom2 = true; any = true; break;
      case kSkew: case kKurt: mom4 = true; any = true; break;
      case kSum: case kMean: sum = true; any = true; break;
      case kMin: case kMax: ext = true; any = true; break;
      case kCount: any = true; break;
      default: break;
    }
  }
  // the fast path: every value of this channel finite (decided from the data of the whole
  // call, so a window's arithmetic may change with a value outside it only between two
  // programs that give the same results: both compute the same partials of the same points)
  bool nf = false;
  for (int64_t i = 0; i < r.N && !nf; ++i) nf = !std::isfinite(static_cast<double>(y[i * C + ch]));
  const bool monotone = r.monotone();
  // the queue where ranges overlap (windows); one range at a time where they hardly do (the
  // choice depends on the ranges alone, never on N or the values)
  const bool queue = r.overlapping();
  if (any) {
    if (mom4) {
      pick_flags<T, 4>(y, C, ch, r, outs, omit, ddof, queue, nf, sum, ext);
    } else if (mom2) {
      pick_flags<T, 2>(y, C, ch, r, outs, omit, ddof, queue, nf, sum, ext);
    } else {
      pick_flags<T, 0>(y, C, ch, r, outs, omit, ddof, queue, nf, sum, ext);
    }
  }
  for (const Out& o : outs) {
    if (o.stat == kFirst || o.stat == kLast) ends<T>(y, C, ch, r, o, omit, monotone);
  }
}

template void folded_ranges<float>(const float*, int64_t, int64_t, const Ranges&,
                                   const std::vector<Out>&, bool, int64_t);
template void folded_ranges<double>(const double*, int64_t, int64_t, const Ranges&,
                                    const std::vector<Out>&, bool, int64_t);

}  // namespace jaxsubset
