// Vector lanes for sliding.cc's groups of blocks (GCC/Clang vector extensions): a Pair holds
// two blocks' running partials side by side, a Quad four windows' results in T. Every
// operation is the element-wise IEEE one the scalar road applies, so a lane ends with the
// bits the scalar road gives its block. Included by sliding.cc only: the vectors never
// cross an ABI boundary.
#pragma once

#include <cmath>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// an AVX2 clone of the group loop, chosen at run time (GCC and Clang on x86-64)
// (-DJAXSUBSET_AVX2_CLONE=0 builds the portable loop alone, for testing it on any machine)
#ifdef JAXSUBSET_AVX2_CLONE
#if JAXSUBSET_AVX2_CLONE
#include <immintrin.h>
#endif
#elif defined(__x86_64__) && defined(__GNUC__)
#define JAXSUBSET_AVX2_CLONE 1
#include <immintrin.h>
#else
#define JAXSUBSET_AVX2_CLONE 0
#endif


namespace jaxsubset {
namespace lanes {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// two blocks side by side, one in each lane (GCC/Clang vector extensions: element-wise IEEE
// operations; 16 bytes, which every x86-64 and arm64 target holds in one register)
typedef double Pair __attribute__((vector_size(2 * sizeof(double))));

// Acc's finite road for two blocks at once: the same operations in the same order, so each
// lane ends with the bits Acc gives its block
template <bool SUM, bool MN, bool MX, bool MOM>
struct PairAcc {
  Pair sum{}, mn{kInfinity, kInfinity}, mx{-kInfinity, -kInfinity}, s1{}, m{}, q{}, c{};

  // the first point: Acc::add with n == 1 (the moments' shift c = x; s1 = m = q = 0)
  inline void start(Pair x) {
    if constexpr (SUM) sum += x;
    if constexpr (MN) mn = x < mn ? x : mn;
    if constexpr (MX) mx = x > mx ? x : mx;
    if constexpr (MOM) c = x;
  }
  // the n-th point, n > 1 (inv_n = 1 / n): Acc::add
  inline void add(Pair x, double inv_n) {
    if constexpr (SUM) sum += x;
    if constexpr (MN) mn = x < mn ? x : mn;
    if constexpr (MX) mx = x > mx ? x : mx;
    if constexpr (MOM) {
      const Pair z = x - c;
      s1 += z;
      const Pair mnew = s1 * inv_n;
      const Pair t = (z - m) * (z - mnew);
      q += t < 0 ? Pair{} : t;  // std::max(t, 0.0): t unless t < 0
      m = mnew;
    }
  }
};

// four windows' values in T, finished as vectors (IEEE division and square root: the bits of
// the scalar operations finish() and combine_finite() use)
typedef float Floats __attribute__((vector_size(4 * sizeof(float))));
template <typename T, bool WIDE>
struct Quad;
template <>
struct Quad<double, false> {
  Pair a{}, b{};
  static Quad all(double v) { return {Pair{v, v}, Pair{v, v}}; }
  static Quad of(Pair x, Pair y) { return {x, y}; }
  Quad operator/(double d) const { return {a / d, b / d}; }
  // v > 0 ? sqrt(v) : v, lane by lane
  Quad sqrt_positive() const {
#if defined(__SSE2__)
    const Pair ra = reinterpret_cast<Pair>(_mm_sqrt_pd(reinterpret_cast<__m128d>(a)));
    const Pair rb = reinterpret_cast<Pair>(_mm_sqrt_pd(reinterpret_cast<__m128d>(b)));
    return {a > 0 ? ra : a, b > 0 ? rb : b};
#else
    Quad r = *this;
    for (int g = 0; g < 2; ++g) {
      r.a[g] = a[g] > 0 ? std::sqrt(a[g]) : a[g];
      r.b[g] = b[g] > 0 ? std::sqrt(b[g]) : b[g];
    }
    return r;
#endif
  }
  double operator[](int g) const { return g < 2 ? a[g] : b[g - 2]; }
};
template <bool WIDE>
struct Quad<float, WIDE> {
  Floats v{};
  static Quad all(float x) { return {Floats{x, x, x, x}}; }
  static Quad of(Pair x, Pair y) {  // each lane rounded to float, as static_cast<float>
    return {Floats{static_cast<float>(x[0]), static_cast<float>(x[1]), static_cast<float>(y[0]),
                   static_cast<float>(y[1])}};
  }
  Quad operator/(float d) const { return {v / d}; }
  Quad sqrt_positive() const {
#if defined(__SSE2__)
    const Floats r = reinterpret_cast<Floats>(_mm_sqrt_ps(reinterpret_cast<__m128>(v)));
    return {v > 0 ? r : v};
#else
    Quad r = *this;
    for (int g = 0; g < 4; ++g) r.v[g] = v[g] > 0 ? std::sqrt(v[g]) : v[g];
    return r;
#endif
  }
  float operator[](int g) const { return v[g]; }
};
// the four lanes in one vector: inlined only into functions compiled for AVX2 (lanes_avx2),
// where it is one register (plain vector operations, which the compiler lowers for the
// function's target)
typedef double Doubles __attribute__((vector_size(4 * sizeof(double))));
template <>
struct Quad<double, true> {
  Doubles v{};
  static Quad all(double x) { return {Doubles{x, x, x, x}}; }
  static Quad of(Pair x, Pair y) { return {Doubles{x[0], x[1], y[0], y[1]}}; }
  Quad operator/(double d) const { return {v / d}; }
  Quad sqrt_positive() const {
    Doubles r = v;
    for (int g = 0; g < 4; ++g) r[g] = std::sqrt(v[g]);
    return {v > 0 ? r : v};
  }
  double operator[](int g) const { return v[g]; }
};

}  // namespace lanes
}  // namespace jaxsubset
