// x-width windows resolved in the kernel (jaxsubset_xwidth_stats): one trailing window per
// row of sorted x, found by two pointers instead of XLA's searchsorted of `x - width`, and
// the folded statistics of every window by a two-stack queue in the same pass.
//
// The windows follow the pure-JAX resolver's rule (resolve/_windows.rolling_rows with
// resolve/_keys' exact bounds), row i of the first `len` rows:
//   end   = i + 1 (closed "right"/"both": later rows tied with x[i] are not in the window),
//           else the first row tied with x[i] ("left"/"neither": no row with x == x[i]);
//   start = the first row inside the lower bound x[i] - width (x > bound for "right" and
//           "neither", x >= bound for "left" and "both"), at most i and at most end.
// The bound is the one _keys.lower_bounds resolves: on float x, `x[i] - width` in the
// promoted float dtype D of x and the width, rounded in float64 (as pandas) and resolved
// exactly in float32 (TwoSum: the sum's rounding error decides where the rounded sum is
// itself a value of x, as _keys.sum_key); on integer x (time axes: int64 ns) the exact
// saturating difference (_keys.int_width's `wrap`, `t` and `big`). Both pointers only move
// forward: the lower bounds and the ends are non-decreasing in i on sorted x.
//
// The queue (count, sum, mean, var, std, sem, min, max): the back partial runs over
// [mid, end) as the ends advance; when a window's start reaches mid, the front is rebuilt as
// the suffix partials of [start, end) (mid = end) and the back restarts empty. Every window
// is front[start] (+) back, combined by Chan's formula (shifts: points of each partial), so
// it is made only of its own points: a value outside it never changes it (NaN and +-inf are
// counted, never added), a window of zeros is exactly 0. Each point enters the back once and
// one front once: O(N) in all, the front's arrays as long as a window.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels.h"

namespace jaxsubset {

bool is_queue_stat(int64_t s) {
  return s == kCount || s == kSum || s == kMean || s == kVar || s == kStd || s == kSem ||
         s == kMin || s == kMax;
}

namespace {

#if defined(__GNUC__)
#define JAXSUBSET_INLINE inline __attribute__((always_inline))
#else
#define JAXSUBSET_INLINE inline
#endif

// p moved past the rows `below` (true on a run of rows from p: x is sorted): three rows
// tested at once, without a branch or a chain from one test to the next (a window's start
// moves about one row per row: a branch per row would be mispredicted half the time), then
// a loop for longer jumps
template <typename Below>
JAXSUBSET_INLINE void skip(int64_t& p, int64_t len, Below below) {
  if (p + 3 <= len) {
    const int64_t c = static_cast<int64_t>(below(p)) + static_cast<int64_t>(below(p + 1)) +
                      static_cast<int64_t>(below(p + 2));
    p += c;
    if (c < 3) return;
  }
  while (p < len && below(p)) ++p;
}

// Lower bounds: advance(i, p) moves the start pointer p past every row below row i's bound.
template <typename X>
struct WideBound {  // D = float64: the rounded difference, compared with x widened (exact)
  const X* x;
  double w;
  bool lo_right;
  // row j below row i's bound (advance's test)
  JAXSUBSET_INLINE bool below(int64_t i, int64_t j) const {
    const double s = static_cast<double>(x[i]) + (-w);
    const double v = static_cast<double>(x[j]);
    return lo_right ? v <= s : v < s;
  }
  JAXSUBSET_INLINE void advance(int64_t i, int64_t& p, int64_t len) const {
    const double s = static_cast<double>(x[i]) + (-w);
    const X* xs = x;
    if (lo_right) {
      skip(p, len, [xs, s](int64_t j) { return static_cast<double>(xs[j]) <= s; });
    } else {
      skip(p, len, [xs, s](int64_t j) { return static_cast<double>(xs[j]) < s; });
    }
  }
};

struct NarrowBound {  // D = float32: x[i] - w == s + err exactly (TwoSum)
  const float* x;
  float b;  // -width
  bool lo_right;
  JAXSUBSET_INLINE bool below(int64_t i, int64_t j) const {
    const float a = x[i];
    const float s = a + b;
    const float z = s - a;
    const float err = (a - (s - z)) + (b - z);
    const bool tie = lo_right ? err >= 0 : err > 0;
    return (x[j] < s) | ((x[j] == s) & tie);
  }
  JAXSUBSET_INLINE void advance(int64_t i, int64_t& p, int64_t len) const {
    const float a = x[i];
    const float s = a + b;
    const float z = s - a;
    const float err = (a - (s - z)) + (b - z);
    const float* xs = x;
    // below: x <= s + err (lo_right), x < s + err (else)
    const bool tie = lo_right ? err >= 0 : err > 0;
    skip(p, len, [xs, s, tie](int64_t j) { return (xs[j] < s) | ((xs[j] == s) & tie); });
  }
};

template <typename X>
struct IntBound {  // the exact difference: below every value where a < t (or `big`)
  const X* x;
  X wrap, t;
  bool big, lo_right;
  JAXSUBSET_INLINE bool below(int64_t i, int64_t j) const {
    using U = std::make_unsigned_t<X>;
    const X a = x[i];
    if (big || a < t) return false;
    const X key = static_cast<X>(static_cast<U>(a) - static_cast<U>(wrap));
    return lo_right ? x[j] <= key : x[j] < key;
  }
  JAXSUBSET_INLINE void advance(int64_t i, int64_t& p, int64_t len) const {
    using U = std::make_unsigned_t<X>;
    const X a = x[i];
    if (big || a < t) return;  // the window starts at 0
    const X key = static_cast<X>(static_cast<U>(a) - static_cast<U>(wrap));  // no wrap here
    const X* xs = x;
    if (lo_right) {
      skip(p, len, [xs, key](int64_t j) { return xs[j] <= key; });
    } else {
      skip(p, len, [xs, key](int64_t j) { return xs[j] < key; });
    }
  }
};

template <typename X>
struct IntUpper {  // the exact sum a + upper: every row where a > ~t (or `big`) is within
  const X* x;
  X wrap, t;
  bool big, hi_right;
  JAXSUBSET_INLINE void advance(int64_t i, int64_t& r, int64_t len) const {
    using U = std::make_unsigned_t<X>;
    const X a = x[i];
    if (big || a > static_cast<X>(~t)) {  // above every value of x's dtype
      r = len;
      return;
    }
    const X key = static_cast<X>(static_cast<U>(a) + static_cast<U>(wrap));  // no wrap here
    const X* xs = x;
    if (hi_right) {
      skip(r, len, [xs, key](int64_t j) { return xs[j] <= key; });
    } else {
      skip(r, len, [xs, key](int64_t j) { return xs[j] < key; });
    }
  }
};

// Windows that end by value (resolve/_windows.rolling_rows, centred): row i's window ends
// after every row within x[i] + upper (rows tied with the end in or out together), `Upper`
// advancing a third pointer as `Bound` advances the start; a window still starts at most at
// its own row and at its end.
template <typename X, typename Bound, typename Upper>
struct WalkBy {
  const X* x;
  int64_t len;
  Bound bound;
  Upper upper;
  int64_t p = 0, r = 0;
  JAXSUBSET_INLINE void next(int64_t i, int64_t& s, int64_t& e) {
    upper.advance(i, r, len);
    e = r;
    bound.advance(i, p, len);
    s = p < i ? p : i;
    s = s < e ? s : e;
  }
};

// The windows of rows 0, 1, ... in order: next(i) gives [s, e).
template <typename X, typename Bound>
struct Walk {
  const X* x;
  int64_t len;
  bool hi_right;
  Bound bound;
  int64_t p = 0, q = 0;  // the start pointer; the first row tied with x[i]
  JAXSUBSET_INLINE void next(int64_t i, int64_t& s, int64_t& e) {
    e = i + 1;
    if (!hi_right) {
      const X xi = x[i];
      while (q < len && x[q] < xi) ++q;
      e = q;
    }
    bound.advance(i, p, len);
    s = p < i ? p : i;
    s = s < e ? s : e;
  }
};

// visit_by's integer x: both operands (wrap, t, big) in x's dtype
template <typename X, typename Fn>
void int_walk_by(const XWidth& a, Fn fn) {
  const X* x = static_cast<const X*>(a.x);
  const X* w = static_cast<const X*>(a.w);
  const X* u = static_cast<const X*>(a.u);
  WalkBy<X, IntBound<X>, IntUpper<X>> wk{
      x, a.len, {x, w[0], w[1], w[2] != 0, a.lo_right}, {x, u[0], u[1], u[2] != 0, a.hi_right}};
  fn(wk);
}

// calls fn(walk) with the WalkBy of a's x dtype, width and upper operand (a.u set); the
// upper bound is the lower one's mirror: x <= x[i] + upper (hi_right) or x < x[i] + upper
template <typename Fn>
void visit_by(const XWidth& a, Fn fn) {
  switch (a.xtype) {
    case XWidth::kF32: {
      const float* x = static_cast<const float*>(a.x);
      if (a.w64) {
        using B = WideBound<float>;
        WalkBy<float, B, B> wk{x, a.len, {x, *static_cast<const double*>(a.w), a.lo_right},
                               {x, -*static_cast<const double*>(a.u), a.hi_right}};
        fn(wk);
      } else {
        WalkBy<float, NarrowBound, NarrowBound> wk{
            x, a.len, {x, -*static_cast<const float*>(a.w), a.lo_right},
            {x, *static_cast<const float*>(a.u), a.hi_right}};
        fn(wk);
      }
      return;
    }
    case XWidth::kF64: {
      const double* x = static_cast<const double*>(a.x);
      using B = WideBound<double>;
      WalkBy<double, B, B> wk{x, a.len, {x, *static_cast<const double*>(a.w), a.lo_right},
                              {x, -*static_cast<const double*>(a.u), a.hi_right}};
      fn(wk);
      return;
    }
    case XWidth::kI32:
      return int_walk_by<int32_t>(a, fn);
    default:
      return int_walk_by<int64_t>(a, fn);
  }
}

// calls fn(walk) with the Walk of a's x dtype and width (the WalkBy where a.u is set)
template <typename Fn>
void visit(const XWidth& a, Fn fn) {
  if (a.u != nullptr) return visit_by(a, fn);
  switch (a.xtype) {
    case XWidth::kF32: {
      const float* x = static_cast<const float*>(a.x);
      if (a.w64) {
        Walk<float, WideBound<float>> wk{x, a.len, a.hi_right,
                                         {x, *static_cast<const double*>(a.w), a.lo_right}};
        fn(wk);
      } else {
        Walk<float, NarrowBound> wk{x, a.len, a.hi_right,
                                    {x, -*static_cast<const float*>(a.w), a.lo_right}};
        fn(wk);
      }
      return;
    }
    case XWidth::kF64: {
      const double* x = static_cast<const double*>(a.x);
      Walk<double, WideBound<double>> wk{x, a.len, a.hi_right,
                                         {x, *static_cast<const double*>(a.w), a.lo_right}};
      fn(wk);
      return;
    }
    case XWidth::kI32: {
      const int32_t* x = static_cast<const int32_t*>(a.x);
      const int32_t* w = static_cast<const int32_t*>(a.w);
      Walk<int32_t, IntBound<int32_t>> wk{x, a.len, a.hi_right,
                                          {x, w[0], w[1], w[2] != 0, a.lo_right}};
      fn(wk);
      return;
    }
    default: {
      const int64_t* x = static_cast<const int64_t*>(a.x);
      const int64_t* w = static_cast<const int64_t*>(a.w);
      Walk<int64_t, IntBound<int64_t>> wk{x, a.len, a.hi_right,
                                          {x, w[0], w[1], w[2] != 0, a.lo_right}};
      fn(wk);
      return;
    }
  }
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// A running partial: NaN and +-inf counted (NF), never added; the moments shifted by the
// first finite point (Welford on x - c, its mean from the running sum of x - c).
template <bool NF, bool SUM, bool EXT, bool MOM>
struct Run {
  double sum = 0, mn = kInf, mx = -kInf, m = 0, q = 0, c = 0, s1 = 0;
  int64_t n = 0, nan = 0, pinf = 0, ninf = 0;
  JAXSUBSET_INLINE void add(double x) {
    if constexpr (NF) {
      if (!std::isfinite(x)) {
        if (std::isnan(x)) {
          ++nan;
          return;
        }
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
    if constexpr (MOM) {
      if (n == 1) {
        c = x;
      } else {
        // Welford's M2 with the mean of (x - c) taken from its running sum (as sliding.cc):
        // two short chains of additions, the division off them
        const double z = x - c;
        s1 += z;
        const double mnew = s1 / static_cast<double>(n);
        q += std::max((z - m) * (z - mnew), 0.0);  // >= 0 but for rounding
        m = mnew;
      }
    }
  }
};

template <typename T, bool NF, bool SUM, bool EXT, bool MOM>
class Queue {
 public:
  Queue(const T* y, int64_t C, int64_t ch, const std::vector<Out>& outs, bool omit,
        int64_t ddof, int64_t mp)
      : y_(y + ch), C_(C), ch_(ch), outs_(outs), omit_(omit), ddof_(ddof), mp_(mp) {}

  template <typename W>
  void run(const W& start_walk, int64_t N, int64_t len) {
    using R = Run<NF, SUM, EXT, MOM>;
    W walk = start_walk;  // (a local: its pointers stay in registers)
    R back;
    int64_t base = 0, mid = 0, hi = 0;  // front: suffixes of [j, mid), j in [base, mid]
    for (int64_t i = 0; i < len; ++i) {
      int64_t s, e;
      walk.next(i, s, e);
      for (; hi < e; ++hi) back.add(static_cast<double>(y_[hi * C_]));
      if (s >= mid) {  // the front is spent: the suffixes of [s, e), the back restarts
        build(s, e);
        base = s;
        mid = e;
        back = R();
      }
      const int64_t j = s - base;
      Partial p;
      p.n_all = e - s;
      int64_t na = NF ? fn_[j] : mid - s, nb = NF ? back.n : e - mid;
      if constexpr (NF) {
        p.nan = fnan_[j] + back.nan;
        p.pinf = fpinf_[j] + back.pinf;
        p.ninf = fninf_[j] + back.ninf;
      }
      p.nf = na + nb;
      if constexpr (SUM) p.sum = fsum_[j] + back.sum;
      if constexpr (EXT) {
        p.mn = back.mn < fmn_[j] ? back.mn : fmn_[j];
        p.mx = back.mx > fmx_[j] ? back.mx : fmx_[j];
      }
      if constexpr (MOM) {
        if (nb == 0 || na == 0) {
          p.m2 = nb == 0 ? fq_[j] : back.q;
        } else {  // Chan's formula, as ranges.cc's queue
          const double fa = static_cast<double>(na), n = static_cast<double>(na + nb);
          const double w = static_cast<double>(nb) / n;
          const double d = (back.c - fc_) + (back.m - fm_[j]);
          p.m2 = fq_[j] + back.q + d * d * fa * w;
        }
      }
      emit(i, p);
    }
    for (int64_t i = len; i < N; ++i) emit(i, Partial());  // absent rows: empty windows
  }

 private:
  // the suffix partials of [s, e) at index j - s (index e - s: empty)
  void build(int64_t s, int64_t e) {
    const size_t L = static_cast<size_t>(e - s + 1);
    if (fq_.size() < L) {
      if constexpr (SUM) fsum_.resize(L);
      if constexpr (EXT) {
        fmn_.resize(L);
        fmx_.resize(L);
      }
      if constexpr (MOM) {
        fm_.resize(L);
        fq_.resize(L);
      } else {
        fq_.resize(L);  // (the size marker)
      }
      if constexpr (NF) {
        fn_.resize(L);
        fnan_.resize(L);
        fpinf_.resize(L);
        fninf_.resize(L);
      }
    }
    Run<NF, SUM, EXT, MOM> r;
    auto store = [&](int64_t at) {
      if constexpr (SUM) fsum_[at] = r.sum;
      if constexpr (EXT) {
        fmn_[at] = r.mn;
        fmx_[at] = r.mx;
      }
      if constexpr (MOM) {
        fm_[at] = r.m;
        fq_[at] = r.q;
      }
      if constexpr (NF) {
        fn_[at] = r.n;
        fnan_[at] = r.nan;
        fpinf_[at] = r.pinf;
        fninf_[at] = r.ninf;
      }
    };
    store(e - s);
    for (int64_t k = e - 1; k >= s; --k) {
      r.add(static_cast<double>(y_[k * C_]));
      store(k - s);
    }
    fc_ = r.c;
  }

  // every statistic of row k from its partial (finish(), min_periods)
  JAXSUBSET_INLINE void emit(int64_t k, const Partial& p) const {
    const int64_t cnt = omit_ ? p.n_all - p.nan : p.n_all;
    const T nan = nan_v<T>();
    for (const Out& o : outs_) {
      if (o.stat == kCount) {
        o.put<T>(k, C_, ch_, p.n_all >= mp_ ? static_cast<T>(cnt) : nan);
      } else {
        o.put<T>(k, C_, ch_, cnt < mp_ ? nan : finish<T>(o.stat, p, omit_, ddof_));
      }
    }
  }

  const T* y_;
  int64_t C_, ch_;
  const std::vector<Out>& outs_;
  bool omit_;
  int64_t ddof_, mp_;
  std::vector<double> fsum_, fmn_, fmx_, fm_, fq_;
  std::vector<int64_t> fn_, fnan_, fpinf_, fninf_;
  double fc_ = 0;
};

template <typename T, bool NF, bool SUM, bool EXT, bool MOM>
void queue(const XWidth& a, const T* y, int64_t C, int64_t ch, const std::vector<Out>& outs,
           bool omit, int64_t ddof, int64_t mp) {
  Queue<T, NF, SUM, EXT, MOM> qu(y, C, ch, outs, omit, ddof, mp);
  visit(a, [&](auto& walk) { qu.run(walk, a.N, a.len); });
}

template <typename T, bool NF>
void pick(const XWidth& a, const T* y, int64_t C, int64_t ch, const std::vector<Out>& outs,
          bool omit, int64_t ddof, int64_t mp, bool sum, bool ext, bool mom) {
  if (sum && ext && mom) return queue<T, NF, true, true, true>(a, y, C, ch, outs, omit, ddof, mp);
  if (sum && ext) return queue<T, NF, true, true, false>(a, y, C, ch, outs, omit, ddof, mp);
  if (sum && mom) return queue<T, NF, true, false, true>(a, y, C, ch, outs, omit, ddof, mp);
  if (ext && mom) return queue<T, NF, false, true, true>(a, y, C, ch, outs, omit, ddof, mp);
  if (sum) return queue<T, NF, true, false, false>(a, y, C, ch, outs, omit, ddof, mp);
  if (ext) return queue<T, NF, false, true, false>(a, y, C, ch, outs, omit, ddof, mp);
  if (mom) return queue<T, NF, false, false, true>(a, y, C, ch, outs, omit, ddof, mp);
  return queue<T, NF, false, false, false>(a, y, C, ch, outs, omit, ddof, mp);
}

}  // namespace

template <typename I>
void xwidth_bounds(const XWidth& a, I* start, I* count) {
  visit(a, [&](auto& walk) {
    for (int64_t i = 0; i < a.N; ++i) {
      int64_t s = a.len, e = a.len;
      if (i < a.len) walk.next(i, s, e);
      start[i] = static_cast<I>(s);
      count[i] = static_cast<I>(e - s);
    }
  });
}

int64_t xwidth_fixed_start(const XWidth& a, int64_t& from) {
  from = a.len;
  // (hi_right and no upper operand: row i's window ends at i)
  if (!a.hi_right || a.u != nullptr || a.len <= 0) return 0;
  int64_t w = 0;
  visit(a, [&](auto& walk) {
    // the first window that does not start at row 0, [i + 1 - width, i], gives the width;
    // the rows before it ([0, j], j < i) are trailing windows of `width` rows only if none
    // holds more, i.e. if it starts at row 1
    int64_t i = 0, s = 0, e = 0;
    for (; i < a.len; ++i) {
      walk.next(i, s, e);
      if (s != 0) break;
    }
    if (i == a.len) {  // every window starts at row 0
      w = a.len;
      return;
    }
    if (s != 1) return;
    w = e - s;
    from = i + 1;
  });
  return w;
}

bool xwidth_fixed_rows(const XWidth& a, int64_t width, int64_t i0, int64_t i1) {
  bool ok = true;
  visit(a, [&](auto& walk) {
    // row i starts at i + 1 - width (>= 1) exactly where row i - width is below its bound
    // and row i + 1 - width is not (x sorted: the rows below a bound are a prefix); tested
    // without the walk, a block of rows at a time
    const auto& bound = walk.bound;
    for (int64_t i = i0; i < i1 && ok;) {
      const int64_t stop = std::min(i1, i + 4096);
      bool all = true;
      for (; i < stop; ++i) all &= bound.below(i, i - width) & !bound.below(i, i + 1 - width);
      ok = all;
    }
  });
  return ok;
}

template <typename T>
void xwidth_folded(const XWidth& a, const T* y, int64_t C, int64_t ch,
                   const std::vector<Out>& outs, bool omit, int64_t ddof, int64_t mp) {
  bool sum = false, ext = false, mom = false;
  for (const Out& o : outs) {
    sum |= o.stat == kSum || o.stat == kMean;
    ext |= o.stat == kMin || o.stat == kMax;
    mom |= o.stat == kVar || o.stat == kStd || o.stat == kSem;
  }
  // every present value finite: the queue without counts (decided from the data of the whole
  // call; both programs compute the same partials of the same points, so the same results)
  bool nf = false;
  const T* yc = y + ch;
  for (int64_t i0 = 0; i0 < a.len && !nf; i0 += 4096) {
    const int64_t i1 = std::min(a.len, i0 + 4096);
    double acc = 0;  // NaN once a NaN or an infinity is met (v - v)
    if (C == 1) {
#pragma omp simd reduction(+ : acc)
      for (int64_t i = i0; i < i1; ++i) acc += static_cast<double>(yc[i]) - static_cast<double>(yc[i]);
    } else {
      for (int64_t i = i0; i < i1; ++i) {
        const double v = static_cast<double>(yc[i * C]);
        acc += v - v;
      }
    }
    nf = !(acc == 0);
  }
  if (nf) {
    pick<T, true>(a, y, C, ch, outs, omit, ddof, mp, sum, ext, mom);
  } else {
    pick<T, false>(a, y, C, ch, outs, omit, ddof, mp, sum, ext, mom);
  }
}

template void xwidth_bounds<int32_t>(const XWidth&, int32_t*, int32_t*);
template void xwidth_bounds<int64_t>(const XWidth&, int64_t*, int64_t*);
template void xwidth_folded<float>(const XWidth&, const float*, int64_t, int64_t,
                                   const std::vector<Out>&, bool, int64_t, int64_t);
template void xwidth_folded<double>(const XWidth&, const double*, int64_t, int64_t,
                                    const std::vector<Out>&, bool, int64_t, int64_t);

}  // namespace jaxsubset
