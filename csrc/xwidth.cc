// x-width windows resolved in the kernel (jaxsubset_xwidth_stats): one trailing window per
// row of sorted x, found by two pointers instead of XLA's searchsorted of `x - width`.
//
// The rule is the pure-JAX resolver's (resolve/_windows.rolling_rows with resolve/_keys'
// exact bounds), row i of the first `len` rows:
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
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels.h"

namespace jaxsubset {

namespace {

// the start pointer p advanced past every point below (outside) the bound of a row;
// `outside(j)` says whether x[j] lies below it
template <typename Outside>
inline void advance(int64_t& p, int64_t limit, Outside outside) {
  while (p < limit && outside(p)) ++p;
}

// start/count of every row, given the "outside the lower bound" test of rows (`below_all`:
// the bound lies below every value, so the window starts at 0)
template <typename X, typename I, typename Bound>
void fill(const X* x, int64_t N, int64_t len, bool hi_right, I* start, I* count, Bound bound) {
  int64_t p = 0, q = 0;  // p: the start pointer; q: the first row tied with x[i]
  for (int64_t i = 0; i < N; ++i) {
    if (i >= len) {
      start[i] = static_cast<I>(len);
      count[i] = 0;
      continue;
    }
    int64_t end = i + 1;
    if (!hi_right) {
      const X xi = x[i];
      while (q < len && x[q] < xi) ++q;
      end = q;
    }
    bound(i, p, len);
    int64_t s = p < i ? p : i;
    s = s < end ? s : end;
    start[i] = static_cast<I>(s);
    count[i] = static_cast<I>(end - s);
  }
}

}  // namespace

template <typename X, typename I>
void xwidth_float_bounds(const X* x, int64_t N, int64_t len, const void* w, bool w64,
                         bool lo_right, bool hi_right, I* start, I* count) {
  if (w64 || std::is_same_v<X, double>) {
    // D = float64: the rounded difference, compared with x exactly (x widened)
    const double wd = w64 ? *static_cast<const double*>(w) : *static_cast<const float*>(w);
    fill<X, I>(x, N, len, hi_right, start, count, [&](int64_t i, int64_t& p, int64_t lim) {
      const double s = static_cast<double>(x[i]) + (-wd);
      if (lo_right) {
        advance(p, lim, [&](int64_t j) { return static_cast<double>(x[j]) <= s; });
      } else {
        advance(p, lim, [&](int64_t j) { return static_cast<double>(x[j]) < s; });
      }
    });
    return;
  }
  // D = float32 (x and the width float32): x[i] - w == s + err exactly (TwoSum)
  const float b = -*static_cast<const float*>(w);
  fill<X, I>(x, N, len, hi_right, start, count, [&](int64_t i, int64_t& p, int64_t lim) {
    const float a = static_cast<float>(x[i]);
    const float s = a + b;
    const float z = s - a;
    const float err = (a - (s - z)) + (b - z);
    if (lo_right) {  // outside: x <= s + err
      advance(p, lim, [&](int64_t j) {
        const float v = static_cast<float>(x[j]);
        return v < s || (v == s && err >= 0);
      });
    } else {  // outside: x < s + err
      advance(p, lim, [&](int64_t j) {
        const float v = static_cast<float>(x[j]);
        return v < s || (v == s && err > 0);
      });
    }
  });
}

template <typename X, typename I>
void xwidth_int_bounds(const X* x, int64_t N, int64_t len, const X* w, bool lo_right,
                       bool hi_right, I* start, I* count) {
  using U = std::make_unsigned_t<X>;
  const X wrap = w[0], t = w[1];
  const bool big = w[2] != 0;
  fill<X, I>(x, N, len, hi_right, start, count, [&](int64_t i, int64_t& p, int64_t lim) {
    const X a = x[i];
    if (big || a < t) return;  // the bound lies below every value: the window starts at 0
    const X key = static_cast<X>(static_cast<U>(a) - static_cast<U>(wrap));  // exact here
    if (lo_right) {
      advance(p, lim, [&](int64_t j) { return x[j] <= key; });
    } else {
      advance(p, lim, [&](int64_t j) { return x[j] < key; });
    }
  });
}

#define JAXSUBSET_XW(X, I)                                                                  \
  template void xwidth_float_bounds<X, I>(const X*, int64_t, int64_t, const void*, bool, bool, \
                                          bool, I*, I*);
JAXSUBSET_XW(float, int32_t)
JAXSUBSET_XW(float, int64_t)
JAXSUBSET_XW(double, int32_t)
JAXSUBSET_XW(double, int64_t)
#undef JAXSUBSET_XW
#define JAXSUBSET_XW(X, I)                                                                     \
  template void xwidth_int_bounds<X, I>(const X*, int64_t, int64_t, const X*, bool, bool, I*, \
                                        I*);
JAXSUBSET_XW(int32_t, int32_t)
JAXSUBSET_XW(int32_t, int64_t)
JAXSUBSET_XW(int64_t, int32_t)
JAXSUBSET_XW(int64_t, int64_t)
#undef JAXSUBSET_XW

}  // namespace jaxsubset
