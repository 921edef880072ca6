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
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels.h"
#include "partial.h"

namespace jaxsubset {

// Empty ranges are left out of the monotonicity and the span (their results are fixed: 0 or
// NaN), so padding a call with empty ranges (an eager call's buckets) never changes the road
// of the others.
void Ranges::scan() {
  int64_t ps = -1, pe = -1, lo = N, hi = 0;
  for (int64_t k = 0; k < K; ++k) {
    const int64_t s = st(k), c = ct(k);
    valid &= s >= 0 && c >= 0 && s <= N && c <= N - s;
    if (c <= 0) continue;
    const int64_t e = s + c;
    is_monotone &= s >= ps && e >= pe;
    ps = s;
    pe = e;
    lo = std::min(lo, s);
    hi = std::max(hi, e);
    total_ += c;
    longest_ = std::max(longest_, c);
  }
  span_ = hi > lo ? hi - lo : 0;
}

namespace {

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

// The two-stack queue over ranges whose both ends are non-decreasing, run a segment at a time
// (van Herk / Gil-Werman): a range [s, e) whose start passed the middle `mid` of the previous
// segment opens a segment with mid = e; the front holds the suffix partials of [i, mid) for
// the segment's starts, the back the prefix partials of [mid, j) for its stops, and every
// range of the segment is front[s] (+) back[e], both made of the range's own points only.
// Structure of arrays, one tight loop per part. The moments' shifts are the segment's points
// y[mid - 1] (front) and y[mid] (back), which every range of the segment holds (or the first
// finite point next to them). Non-finite values (NF) are counted, never added, so a window of
// finite points gets the same bits whatever lies outside it.
template <typename T, int MOM, bool SUM, bool EXT, bool NF>
class Segments {
 public:
  Segments(const T* y, int64_t C, int64_t ch) : y_(y + ch), C_(C) {}

  void run(const Ranges& r, const std::vector<Out>& outs, bool omit, int64_t ddof) {
    int64_t k = 0;
    while (k < r.K) {
      if (r.ct(k) == 0) {
        emit_empty(k, outs, r.N);
        ++k;
        continue;
      }
      const int64_t base = r.st(k), mid = base + r.ct(k);
      int64_t k1 = k + 1, stop = mid;
      for (; k1 < r.K; ++k1) {
        if (r.ct(k1) == 0) continue;
        if (r.st(k1) >= mid) break;
        stop = std::max(stop, r.st(k1) + r.ct(k1));
      }
      build_front(base, mid);
      build_back(mid, stop);
      if constexpr (!NF && MOM < 4) {
        emit_finite(k, k1, base, mid, r, outs, ddof);
      } else {
        for (int64_t j = k; j < k1; ++j) {
          const int64_t s = r.st(j), e = s + r.ct(j);
          if (e == s) {
            emit_empty(j, outs, r.N);
          } else {
            emit(j, s - base, e - mid, outs, omit, ddof);
          }
        }
      }
      k = k1;
    }
  }

 private:
  // one side's partials: index i holds the partial of i points next to mid
  struct Side {
    std::vector<double> sum, mn, mx, m, q, r, s4;
    std::vector<int64_t> n, nan, pinf, ninf;  // NF only (else n = i)
    double c = 0;
    void resize(size_t len) {
      if constexpr (SUM) sum.resize(len);
      if constexpr (EXT) {
        mn.resize(len);
        mx.resize(len);
      }
      if constexpr (MOM > 0) {
        m.resize(len);
        q.resize(len);
      }
      if constexpr (MOM == 4) {
        r.resize(len);
        s4.resize(len);
      }
      if constexpr (NF) {
        n.resize(len);
        nan.resize(len);
        pinf.resize(len);
        ninf.resize(len);
      }
    }
  };

  // the partials of the points at pos[0], pos[step], ... (step -1: the front, from mid - 1
  // down; +1: the back, from mid up), i points each for i = 0 .. len - 1
  void build(Side& sd, int64_t first, int64_t step, int64_t len) {
    sd.resize(static_cast<size_t>(len + 1));
    double sum = 0, mn = INFINITY, mx = -INFINITY, m = 0, q = 0, r3 = 0, s4 = 0, c = 0;
    int64_t n = 0, nan = 0, pinf = 0, ninf = 0;
    bool shifted = false;
    auto store = [&](int64_t i) {
      if constexpr (SUM) sd.sum[i] = sum;
      if constexpr (EXT) {
        sd.mn[i] = mn;
        sd.mx[i] = mx;
      }
      if constexpr (MOM > 0) {
        sd.m[i] = m;
        sd.q[i] = q;
      }
      if constexpr (MOM == 4) {
        sd.r[i] = r3;
        sd.s4[i] = s4;
      }
      if constexpr (NF) {
        sd.n[i] = n;
        sd.nan[i] = nan;
        sd.pinf[i] = pinf;
        sd.ninf[i] = ninf;
      }
    };
    store(0);
    const T* p = y_ + first * C_;
    const int64_t stride = step * C_;
    for (int64_t i = 1; i <= len; ++i, p += stride) {
      const double x = static_cast<double>(*p);
      bool finite = true;
      if constexpr (NF) {
        if (std::isnan(x)) {
          ++nan;
          finite = false;
        } else if (std::isinf(x)) {
          if (x > 0) ++pinf; else ++ninf;
          if constexpr (EXT) {
            mn = std::min(mn, x);
            mx = std::max(mx, x);
          }
          finite = false;
        }
      }
      if (finite) {
        if constexpr (NF) ++n;
        if constexpr (SUM) sum += x;
        if constexpr (EXT) {
          mn = x < mn ? x : mn;
          mx = x > mx ? x : mx;
        }
        if constexpr (MOM > 0) {
          if (!shifted) {
            c = x;
            shifted = true;
          } else {
            const double nf = static_cast<double>(NF ? n : i);
            const double d = (x - c) - m;
            const double w = 1.0 / nf;
            if constexpr (MOM == 4) {  // Pebay with the one-point partial (1, x, 0, 0, 0, 0)
              const double na = nf - 1, v = na * w, d2 = d * d, naw = na * w;
              s4 += d2 * d2 * naw * (v * v - v * w + w * w) + 6 * d2 * (w * w * q) -
                    4 * d * (w * r3);
              r3 += d2 * d * naw * (v - w) - 3 * d * (w * q);
            }
            m += d * w;
            q += d * ((x - c) - m);
          }
        }
      }
      store(i);
    }
    sd.c = c;
  }

  void build_front(int64_t base, int64_t mid) { build(front_, mid - 1, -1, mid - base); front_len_ = mid - base; }
  void build_back(int64_t mid, int64_t stop) { build(back_, mid, 1, stop - mid); }

  void emit_empty(int64_t k, const std::vector<Out>& outs, int64_t) {
    Partial p;
    for (const Out& o : outs) {
      if (o.stat == kCount) {
        o.put_count(k, C_, ch_, 0);
      } else if (o.stat != kFirst && o.stat != kLast && !is_order(o.stat)) {
        o.put<T>(k, C_, ch_, finish<T>(o.stat, p, false, 0));
      }
    }
  }

  // Every value finite: one tight loop per statistic over the segment's ranges [k0, k1), the
  // same arithmetic as emit() + finish() (so the same bits).
  void emit_finite(int64_t k0, int64_t k1, int64_t base, int64_t mid, const Ranges& r,
                   const std::vector<Out>& outs, int64_t ddof) {
    const T nan = nan_v<T>();
    for (const Out& o : outs) {
      const int64_t stat = o.stat;
      if (stat == kFirst || stat == kLast || is_order(stat)) continue;
      if (stat == kSkew || stat == kKurt) {
        for (int64_t j = k0; j < k1; ++j) {
          const int64_t s = r.st(j), e = s + r.ct(j);
          if (e == s) {
            emit_empty(j, {o}, r.N);
          } else {
            emit(j, s - base, e - mid, {o}, false, ddof);
          }
        }
        continue;
      }
      T* out = static_cast<T*>(o.base);
      for (int64_t j = k0; j < k1; ++j) {
        const int64_t s = r.st(j), n = r.ct(j), e = s + n;
        const int64_t i = mid - s, b = e - mid;  // front and back indices
        if (stat == kCount) {
          o.put_count(j, C_, ch_, n);
          continue;
        }
        if (n == 0) {  // an empty range (anywhere: left out of the segments)
          out[j * C_ + ch_] = stat == kSum ? T(0) : nan;
          continue;
        }
        T v = nan;
        if constexpr (SUM) {
          if (stat == kSum || stat == kMean) {
            const T sum = static_cast<T>(front_.sum[i] + back_.sum[b]);
            v = stat == kSum ? sum : (n > 0 ? sum / static_cast<T>(n) : nan);
          }
        }
        if constexpr (EXT) {
          if (stat == kMin && n > 0) v = static_cast<T>(back_.mn[b] < front_.mn[i] ? back_.mn[b] : front_.mn[i]);
          if (stat == kMax && n > 0) v = static_cast<T>(back_.mx[b] > front_.mx[i] ? back_.mx[b] : front_.mx[i]);
        }
        if constexpr (MOM > 0) {
          if (stat == kVar || stat == kStd || stat == kSem) {
            double m2;
            if (b == 0 || i == 0) {
              m2 = b == 0 ? front_.q[i] : back_.q[b];
            } else {
              const double fa = static_cast<double>(i), w = static_cast<double>(b) / static_cast<double>(n);
              const double d = (back_.c - front_.c) + (back_.m[b] - front_.m[i]);
              m2 = front_.q[i] + back_.q[b] + d * d * fa * w;
            }
            const int64_t denom = n - ddof;
            T var = denom > 0 ? static_cast<T>(m2) / static_cast<T>(denom) : nan;
            if (stat == kVar) {
              v = var;
            } else {
              v = var > 0 ? std::sqrt(var) : var;
              if (stat == kSem) v = v / std::sqrt(static_cast<T>(n > 0 ? n : 1));
            }
          }
        }
        out[j * C_ + ch_] = v;
      }
    }
  }

  // range [base + a, mid + b): front index front_len - a (its points), back index b
  void emit(int64_t k, int64_t a, int64_t b, const std::vector<Out>& outs, bool omit,
            int64_t ddof) {
    const int64_t i = front_len_ - a;
    Partial p;
    p.n_all = i + b;
    int64_t na = i, nb = b;
    if constexpr (NF) {
      na = front_.n[i];
      nb = back_.n[b];
      p.nan = front_.nan[i] + back_.nan[b];
      p.pinf = front_.pinf[i] + back_.pinf[b];
      p.ninf = front_.ninf[i] + back_.ninf[b];
    }
    p.nf = na + nb;
    if constexpr (SUM) p.sum = front_.sum[i] + back_.sum[b];
    if constexpr (EXT) {
      p.mn = back_.mn[b] < front_.mn[i] ? back_.mn[b] : front_.mn[i];
      p.mx = back_.mx[b] > front_.mx[i] ? back_.mx[b] : front_.mx[i];
    }
    if constexpr (MOM > 0) {
      if (nb == 0 || na == 0) {
        const Side& sd = nb == 0 ? front_ : back_;
        const int64_t at = nb == 0 ? i : b;
        p.m2 = sd.q[at];
        if constexpr (MOM == 4) {
          p.m3 = sd.r[at];
          p.m4 = sd.s4[at];
        }
      } else {
        // Chan's formula (_moments.chan), Pebay's for M3, M4 (_tree.pebay)
        const double fa = static_cast<double>(na), n = static_cast<double>(na + nb);
        const double w = static_cast<double>(nb) / n, v = 1 - w;
        const double qa = front_.q[i], qb = back_.q[b];
        const double d = (back_.c - front_.c) + (back_.m[b] - front_.m[i]);
        p.m2 = qa + qb + d * d * fa * w;
        if constexpr (MOM == 4) {
          const double ra = front_.r[i], rb = back_.r[b], d2 = d * d, naw = fa * w;
          p.m3 = ra + rb + d2 * d * naw * (v - w) + 3 * d * (v * qb - w * qa);
          p.m4 = front_.s4[i] + back_.s4[b] + d2 * d2 * naw * (v * v - v * w + w * w) +
                 6 * d2 * (v * v * qb + w * w * qa) + 4 * d * (v * rb - w * ra);
        }
      }
    }
    for (const Out& o : outs) {
      if (o.stat == kCount) {
        o.put_count(k, C_, ch_, omit ? p.n_all - p.nan : p.n_all);
      } else if (o.stat != kFirst && o.stat != kLast && !is_order(o.stat)) {
        o.put<T>(k, C_, ch_, finish<T>(o.stat, p, omit, ddof));
      }
    }
  }

 public:
  int64_t ch_ = 0;

 private:
  const T* y_;
  int64_t C_;
  Side front_, back_;
  int64_t front_len_ = 0;
};

template <typename T, int MOM, bool SUM, bool EXT, bool NF>
void queue_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                bool omit, int64_t ddof) {
  Segments<T, MOM, SUM, EXT, NF> seg(y, C, ch);
  seg.ch_ = ch;
  seg.run(r, outs, omit, ddof);
}

// One range at a time (partial.h): a vectorised pass for counts, sums and extremes, one for
// the central moments about the range's mean; non-finite points only cost a second, careful
// pass in the ranges that hold them.
template <typename T, int MOM, bool SUM, bool EXT>
void direct_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                 bool omit, int64_t ddof) {
  const T* yc = y + ch;
  for (int64_t k = 0; k < r.K; ++k) {
    const int64_t s = r.st(k);
    emit<T>(range_partial<T, SUM, EXT, MOM>(yc, C, s, s + r.ct(k)), k, C, ch, outs, omit, ddof);
  }
}

template <typename T, int MOM, bool SUM, bool EXT, bool NF>
void folded_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                 bool omit, int64_t ddof, bool queue) {
  if (queue) {
    queue_road<T, MOM, SUM, EXT, NF>(y, C, ch, r, outs, omit, ddof);
  } else {
    direct_road<T, MOM, SUM, EXT>(y, C, ch, r, outs, omit, ddof);
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

// Whether channel `ch` holds a NaN or an infinity: blocks of 1024 points without a branch per
// point (the exponent bits all ones), so the check vectorises on one channel.
template <typename T>
bool any_nonfinite(const T* y, int64_t N, int64_t C, int64_t ch) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  constexpr U kExp = sizeof(T) == 8 ? U(0x7ff0000000000000ULL) : U(0x7f800000U);
  for (int64_t b = 0; b < N; b += 1024) {
    const int64_t e = std::min(N, b + 1024);
    U bad = 0;
    if (C == 1) {
      for (int64_t i = b; i < e; ++i) {
        U u;
        std::memcpy(&u, y + i + ch, sizeof(U));
        bad |= ((u & kExp) == kExp);
      }
    } else {
      for (int64_t i = b; i < e; ++i) bad |= !std::isfinite(static_cast<double>(y[i * C + ch]));
    }
    if (bad) return true;
  }
  return false;
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
  const bool nf = any_nonfinite(y, r.N, C, ch);
  const bool monotone = r.monotone();
  // the queue where ranges overlap (windows); one range at a time where they hardly do (the
  // choice depends on the ranges alone, never on N or the values)
  const bool queue = r.overlapping();
  if (any && !mom2 && !mom4 && !sum && !ext && !(nf && omit)) {
    // counts alone, no NaN to leave out: the ranges' lengths
    for (const Out& o : outs) {
      if (o.stat != kCount) continue;
      for (int64_t k = 0; k < r.K; ++k) o.put_count(k, C, ch, r.ct(k));
    }
  } else if (any) {
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
