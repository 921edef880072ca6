// The bin rule of the bins kernel (bins.cc): which bin of strictly increasing edges holds a
// float x, EXACTLY _bin_numbers.binnumber's (SciPy's binned_statistic): the number of edges at or
// below x, compared as order-preserving integer keys (resolve/_keys.keys: no flush of
// subnormals, -0.0 as +0.0), NaN in no bin; a point at or above the last edge whose
// numpy.around(x, dec) equals around(last, dec) goes to the last bin (SciPy's rounding rule).
//
// How: a guess G(x) from x's place in the edges' span (equal cells: floor((x - lo) * scale),
// through a table of the answers at the cells' lower boundaries where the edges are not
// evenly spaced), then one exact key comparison each way. G is non-decreasing in x (every
// step is: a subtraction, a product by a positive finite scale, clamps, truncation, a
// non-decreasing table), so checking it at both ends of every bin once, for the edges at
// hand, proves |G(x) - D(x)| <= 1 for EVERY x (D: the exact answer); then the two
// comparisons give D exactly, with no data-dependent walk. Edges spread over many orders of
// magnitude (log-spaced bins: most edges in the lowest of equal cells) get the same table
// over equal cells of the KEYS' span instead (a float's key grows about as its logarithm;
// still non-decreasing in x, so the same proof). Where both checks fail (edges clustered
// within a cell either way), each answer is verified and a binary search fixes it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define JAXSUBSET_AVX2 1  // quick_block_avx2: compiled for AVX2, taken where the CPU has it
#endif

namespace jaxsubset {

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
  b = b == std::numeric_limits<K>::min() ? 0 : b;
  return b < 0 ? (b ^ std::numeric_limits<K>::max()) : b;
}

// the value of a key (its inverse; key 0 is +0.0)
template <typename TX>
inline TX from_key(typename KeyOf<TX>::K k) {
  using K = typename KeyOf<TX>::K;
  const K b = k < 0 ? (k ^ std::numeric_limits<K>::max()) : k;
  TX v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// _bin_numbers.numpy_power_of_ten: the 10**n numpy.around scales by (NumPy's C power_of_ten:
// exact up to 1e8, then 1e9 multiplied by 10 once per further digit), n held at top =
// floor(log10(TX's max)) (308 for float64, 38 for float32: past it NumPy's power is inf and
// every rounding NaN; held there, SciPy's rule keeps the last edge closed), rounded to TX
template <typename TX>
inline TX numpy_power_of_ten(int64_t n) {
  static const double small[9] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  const int64_t top = sizeof(TX) == 4 ? 38 : 308;
  if (n > top) n = top;
  double r = 1e9;
  if (n < 9) {
    r = small[n];
  } else {
    for (int64_t k = 9; k < n; ++k) r *= 10.;
  }
  return static_cast<TX>(r);
}

// _bin_numbers.around: numpy.around(v, dec) in TX, p = numpy_power_of_ten(|dec|)
template <typename TX>
inline TX around(TX v, int32_t dec, TX p) {
  return dec >= 0 ? std::nearbyint(v * p) / p : std::nearbyint(v / p) * p;
}

// The edges of one batch item and the bin rule.
template <typename TX>
class Edges {
 public:
  using K = typename KeyOf<TX>::K;

  // nbins edges' bins; `none` (default nbins): the label of a point in no bin (labels()),
  // the kernel's number of result bins where the edges are padded past the real ones
  Edges(const TX* e, int64_t nbins, int32_t dec, int64_t none = -1)
      : nb_(nbins), none_(none < 0 ? nbins : none), dec_(dec), ke_(nbins + 4) {
    // ke_[i]: the key of edge i - 1, with sentinels below and above every key (two above: a
    // NaN whose key is the largest steps onto the first and is checked against the second)
    ke_[0] = std::numeric_limits<K>::min();
    for (int64_t k = 0; k <= nb_; ++k) ke_[k + 1] = key(e[k]);
    ke_[nb_ + 2] = ke_[nb_ + 3] = std::numeric_limits<K>::max();
    p_ = numpy_power_of_ten<TX>(dec_ < 0 ? -static_cast<int64_t>(dec_) : dec_);
    last_r_ = around(e[nb_], dec_, p_);
    lo_ = static_cast<double>(e[0]);
    hi_ = static_cast<double>(e[nb_]);
    // first one cell per bin, the cell itself the guess (evenly spaced edges); else a table
    // of the answers at the lower boundaries of up to 4 cells per bin
    direct_ = true;
    cells(nb_);
    proven_ = check(e);
    if (!proven_) {
      direct_ = false;
      keyed_table(e);
      proven_ = check(e);
      if (!proven_) {
        by_key_ = true;  // the same table over the keys' span (log-spaced edges)
        keyed_table(e);
        proven_ = check(e);
        if (!proven_) {  // neither proven: the value table, verified per point
          by_key_ = false;
          keyed_table(e);
        }
      }
    }
    quick_setup(e);
#if defined(JAXSUBSET_AVX2)
    // JAXSUBSET_NATIVE_AVX2=0 (read per call, as JAXSUBSET_NATIVE_THREADS): the SSE2 loop
    // even where the CPU has AVX2 (the tests compare the two)
    const char* v = std::getenv("JAXSUBSET_NATIVE_AVX2");
    avx2_ = __builtin_cpu_supports("avx2") && !(v != nullptr && v[0] == '0');
#endif
  }

  // whether every answer is the guess corrected by one comparison each way (see the top)
  bool proven() const { return proven_; }
  int64_t nbins() const { return nb_; }

  // the number of edges at or below x (0 .. nb + 1), SciPy's last-edge rule applied; NaN:
  // nb + 1 (in no bin)
  int64_t bin(TX x) const {
    const int64_t d = proven_ ? near(x) : walk(x);
    return d == nb_ + 1 ? rule(x, d) : d;
  }

  // bin() of x[0..n) (n <= 256) into out, NaN nb + 1 whatever its sign bit: the quick road
  // where it is taken (a point safely inside cell g is in bin number g + 1), bin() for the rest
  template <typename TD>
  void numbers(const TX* x, int64_t n, TD* out) const {
    int32_t lab[256];
    bool miss = true;
    if (quick_) {
      miss = quick_any(x, n, lab);
      if (!miss) {
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<TD>(lab[i] + 1);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t d;
      if (quick_ && lab[i] >= 0) {
        d = lab[i] + 1;
      } else {
        d = std::isnan(x[i]) ? nb_ + 1 : bin(x[i]);
      }
      out[i] = static_cast<TD>(d);
    }
  }

  // the bins of x[0..n) as labels: 0 .. nb - 1, none_ for a point in no bin
  void labels(const TX* x, int64_t n, int32_t* out) const {
    if (quick_) {
      // the quick road (no table, no comparison of keys): a point whose place in the span
      // is safely inside a cell is in that cell's bin (see quick_setup); the others (-1:
      // near an edge, outside, NaN) by bin()
      if (quick_any(x, n, out)) {
        for (int64_t i = 0; i < n; ++i) {
          if (out[i] >= 0) continue;
          const int64_t d = bin(x[i]);
          out[i] = static_cast<int32_t>(d >= 1 && d <= nb_ ? d - 1 : none_);
        }
      }
    } else if (proven_) {
      // the guesses and comparisons alone (a loop without branches or calls), then SciPy's
      // rule for the points at or above the last edge, if any, one by one
      int32_t top = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t d = near(x[i]);
        top |= d == nb_ + 1;
        const bool in = static_cast<uint64_t>(d - 1) < static_cast<uint64_t>(nb_);
        out[i] = static_cast<int32_t>(in ? d - 1 : none_);
      }
      if (top) {
        for (int64_t i = 0; i < n; ++i) {
          if (out[i] == none_ && near(x[i]) == nb_ + 1 && rule(x[i], nb_ + 1) == nb_) {
            out[i] = static_cast<int32_t>(nb_ - 1);
          }
        }
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t d = bin(x[i]);
        out[i] = static_cast<int32_t>(d >= 1 && d <= nb_ ? d - 1 : none_);
      }
    }
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
    while (at < n && !std::isnan(x[at]) && around(x[at], dec_, p_) == last_r_) ++at;
    return at;
  }

 private:
  // The quick road: phi(x) = (x - lo) * (nb / span) is non-decreasing in x, so every point
  // below edge k has phi at most A_k = phi(the value just below edge k) and every point at
  // or above it at least B_k = phi(edge k). With f = phi - floor(phi) (exact) and g =
  // floor(phi) in 0..nb-1: f > L >= A_g - g says the point is at or above edge g, f < H <=
  // B_{g+1} - g that it is below edge g + 1: bin g, EXACTLY. L and H are the extremes over
  // every bin, widened by 1e-8 (far above the rounding of A_k - k for phi < 2**20); the road
  // is taken where L < H (evenly spaced edges: L and H near 0 and 1).
  void quick_setup(const TX* e) {
    quick_ = false;
    const double span = hi_ - lo_;
    if (!(span > 0 && std::isfinite(span)) || nb_ > (int64_t{1} << 20)) return;
    qm_ = static_cast<double>(nb_);
    qscale_ = qm_ / span;
    if (!(qscale_ > 0 && std::isfinite(qscale_))) return;
    double L = -INFINITY, H = INFINITY;
    for (int64_t k = 0; k < nb_; ++k) {
      if (std::isnan(e[k]) || std::isnan(e[k + 1])) return;
      const TX below = from_key<TX>(ke_[k + 1] - 1);
      const double a = std::isnan(below) ? -INFINITY : phi(below);
      L = std::max(L, a - static_cast<double>(k));
      H = std::min(H, phi(e[k + 1]) - static_cast<double>(k));
    }
    ql_ = L + 1e-8;
    qh_ = H - 1e-8;
    quick_ = ql_ < qh_;
  }
  double phi(TX x) const { return (static_cast<double>(x) - lo_) * qscale_; }
  int32_t quick(TX x) const {
    const double t = phi(x);
    const bool in = t >= 0 && t < qm_;  // (NaN: false)
    const double tt = in ? t : 0.0;
    const int32_t g = static_cast<int32_t>(tt);
    const double f = tt - static_cast<double>(g);
    return in && f > ql_ && f < qh_ ? g : -1;
  }
  // quick() of n points into out by the AVX2 loop where it is taken, else the SSE2 one (the
  // same labels); whether any is -1
  bool quick_any(const TX* x, int64_t n, int32_t* out) const {
#if defined(JAXSUBSET_AVX2)
    if (avx2_) return quick_block_avx2(x, n, out);
#endif
    return quick_block(x, n, out);
  }

  // quick() of n points into out (2 at a time where SSE2 is: the same IEEE operations);
  // whether any is -1
  bool quick_block(const TX* x, int64_t n, int32_t* out) const {
    int64_t i = 0;
    int miss = 0;
#if defined(__SSE2__)
    const __m128d lo = _mm_set1_pd(lo_), sc = _mm_set1_pd(qscale_), m = _mm_set1_pd(qm_);
    const __m128d ql = _mm_set1_pd(ql_), qh = _mm_set1_pd(qh_), zero = _mm_setzero_pd();
    const __m128i ones = _mm_set1_epi32(-1);
    for (; i + 2 <= n; i += 2) {
      __m128d v;
      if constexpr (sizeof(TX) == 8) {
        v = _mm_loadu_pd(reinterpret_cast<const double*>(x + i));
      } else {
        const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
        v = _mm_cvtps_pd(_mm_castsi128_ps(two));
      }
      const __m128d t = _mm_mul_pd(_mm_sub_pd(v, lo), sc);
      __m128d ok = _mm_and_pd(_mm_cmpge_pd(t, zero), _mm_cmplt_pd(t, m));
      const __m128d tt = _mm_and_pd(t, ok);
      const __m128i g = _mm_cvttpd_epi32(tt);
      const __m128d f = _mm_sub_pd(tt, _mm_cvtepi32_pd(g));
      ok = _mm_and_pd(ok, _mm_and_pd(_mm_cmpgt_pd(f, ql), _mm_cmplt_pd(f, qh)));
      miss |= _mm_movemask_pd(ok) ^ 3;
      const __m128i k = _mm_shuffle_epi32(_mm_castpd_si128(ok), _MM_SHUFFLE(3, 3, 2, 0));
      const __m128i r = _mm_or_si128(_mm_and_si128(g, k), _mm_andnot_si128(k, ones));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), r);
    }
#endif
    for (; i < n; ++i) {
      out[i] = quick(x[i]);
      miss |= out[i] < 0;
    }
    return miss != 0;
  }

#if defined(JAXSUBSET_AVX2)
  // quick_block four at a time (the same IEEE operations: the same labels), for CPUs with
  // AVX2 (the build stays portable: this function alone is compiled for AVX2, and called only
  // where __builtin_cpu_supports says the CPU has it)
  __attribute__((target("avx2"))) bool quick_block_avx2(const TX* x, int64_t n,
                                                        int32_t* out) const {
    int64_t i = 0;
    int miss = 0;
    const __m256d lo = _mm256_set1_pd(lo_), sc = _mm256_set1_pd(qscale_);
    const __m256d m = _mm256_set1_pd(qm_), ql = _mm256_set1_pd(ql_), qh = _mm256_set1_pd(qh_);
    const __m256d zero = _mm256_setzero_pd();
    const __m128i ones = _mm_set1_epi32(-1);
    const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);  // each lane's low half
    for (; i + 4 <= n; i += 4) {
      __m256d v;
      if constexpr (sizeof(TX) == 8) {
        v = _mm256_loadu_pd(reinterpret_cast<const double*>(x + i));
      } else {
        v = _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(x + i)));
      }
      const __m256d t = _mm256_mul_pd(_mm256_sub_pd(v, lo), sc);
      __m256d ok = _mm256_and_pd(_mm256_cmp_pd(t, zero, _CMP_GE_OQ),
                                 _mm256_cmp_pd(t, m, _CMP_LT_OQ));
      const __m256d tt = _mm256_and_pd(t, ok);
      const __m128i g = _mm256_cvttpd_epi32(tt);
      const __m256d f = _mm256_sub_pd(tt, _mm256_cvtepi32_pd(g));
      ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(f, ql, _CMP_GT_OQ),
                                           _mm256_cmp_pd(f, qh, _CMP_LT_OQ)));
      miss |= _mm256_movemask_pd(ok) ^ 15;
      const __m128i k = _mm256_castsi256_si128(
          _mm256_permutevar8x32_epi32(_mm256_castpd_si256(ok), low));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_blendv_epi8(ones, g, k));
    }
    for (; i < n; ++i) {
      out[i] = quick(x[i]);
      miss |= out[i] < 0;
    }
    return miss != 0;
  }
#endif

  // a table of the answers at the lower boundaries of up to 4 equal cells per bin, over the
  // edges' values (by_key_ false) or their keys (true)
  void keyed_table(const TX* e) {
    cells(nb_ * std::max<int64_t>(1, std::min<int64_t>(4, (int64_t{1} << 20) / nb_)));
    table_.assign(m_ + 2, 0);
    table_[m_ + 1] = static_cast<int32_t>(nb_ + 1);
    for (int64_t j = 0; j < m_; ++j) {
      const double c = scale_ > 0 ? g0_ + static_cast<double>(j) / scale_ : g0_;
      K kc;
      if (by_key_) {  // a key between the first and last edges' (c is, up to rounding)
        const double top = static_cast<double>(key(e[nb_]));
        kc = static_cast<K>(std::min(std::max(c, g0_), top));
      } else {
        kc = key(static_cast<TX>(c));
      }
      table_[j + 1] = static_cast<int32_t>(search(kc));
    }
  }

  // m equal cells over the guess's span: the edges' values, or their keys (by_key_)
  void cells(int64_t m) {
    m_ = m;
    mf_ = static_cast<double>(m);
    g0_ = by_key_ ? static_cast<double>(ke_[1]) : lo_;
    const double g1 = by_key_ ? static_cast<double>(ke_[nb_ + 1]) : hi_;
    const double span = g1 - g0_;
    scale_ = span > 0 && std::isfinite(span) ? mf_ / span : 0.0;
  }

  // G(x): non-decreasing in x (NaN: m + 1, the top); the same operations wherever it runs
  // (the check below and every lookup: IEEE double, no contraction, see CMakeLists.txt)
  int64_t guess(TX x) const {
    const double v = by_key_ ? static_cast<double>(key(x)) : static_cast<double>(x);
    double t = (v - g0_) * scale_;
    t = t < 0 ? -1.0 : t;  // below the first edge: cell -1 (NaN stays NaN)
    t = t < mf_ ? t : mf_;  // at or above the last, NaN: m
    const int64_t c = static_cast<int64_t>(t + 1.0);
    return direct_ ? c : table_[c];
  }

  // |G - D| <= 1 everywhere: D is k on [edge k - 1, edge k) (0 below the first edge, nb + 1
  // from the last), G is non-decreasing, so G at a bin's first value must be at least k - 1
  // and at its last value (the key below the next edge's) at most k + 1
  bool check(const TX* e) const {
    if (!(scale_ > 0 && std::isfinite(scale_)) || m_ + 2 >= std::numeric_limits<int32_t>::max())
      return false;
    for (int64_t k = 0; k <= nb_ + 1; ++k) {
      if (k >= 1 && (std::isnan(e[k - 1]) || guess(e[k - 1]) < k - 1)) return false;
      if (k <= nb_ && ke_[k + 1] > std::numeric_limits<K>::min()) {
        const TX below = from_key<TX>(ke_[k + 1] - 1);
        if (!std::isnan(below) && guess(below) > k + 1) return false;
      }
    }
    return true;
  }

  // D(x) from the proven guess: one comparison each way, NaN apart
  int64_t near(TX x) const {
    const K kx = key(x);
    int64_t d = guess(x);
    d += kx >= ke_[d + 1];
    d -= kx < ke_[d];
    return x == x ? d : nb_ + 1;
  }

  // D(x) from the table's guess, a step each way, verified, else a binary search
  int64_t walk(TX x) const {
    const K kx = key(x);
    int64_t d = scale_ > 0 ? guess(x) : search(kx);
    d += kx >= ke_[d + 1];
    d -= kx < ke_[d];
    if (!(ke_[d] <= kx && kx < ke_[d + 1])) d = search(kx);
    return std::isnan(x) ? nb_ + 1 : d;
  }

  // the number of edges whose keys are at or below kx
  int64_t search(K kx) const {
    return std::upper_bound(ke_.begin() + 1, ke_.begin() + nb_ + 2, kx) - (ke_.begin() + 1);
  }
  int64_t rule(TX x, int64_t d) const {
    return d == nb_ + 1 && around(x, dec_, p_) == last_r_ ? nb_ : d;
  }

  int64_t nb_, none_;
  int32_t dec_;
  std::vector<K> ke_;  // nb + 4: a sentinel, the edges' keys, two sentinels
  TX p_;  // numpy.around's power of ten for dec_
  TX last_r_;
  int64_t m_ = 0;
  double lo_ = 0, hi_ = 0, mf_ = 0, scale_ = 0;
  double g0_ = 0;  // the guess's origin: lo_, or the first edge's key (by_key_)
  bool direct_ = true, proven_ = false, quick_ = false, by_key_ = false, avx2_ = false;
  double qm_ = 0, qscale_ = 0, ql_ = 0, qh_ = 0;
  std::vector<int32_t> table_;
};

}  // namespace jaxsubset
