// Selection of one order statistic of a range's copied values (order.cc's per-range road,
// bin_order.h's bins): the k-th smallest, with the values left as std::nth_element leaves
// them (everything before position k at or below it, everything after at or above), so the
// next order statistic is the minimum of the rest.
//
// Quickselect with branchless partitions: a pivot from nine samples (the ninther), the values
// below it moved to the front in one pass that swaps every value (no branch on the data: a
// random range mispredicts half of std::nth_element's branches), then the values equal to it
// behind those, so ties and constant ranges finish at once. About 3x std::nth_element's speed
// on 1e4 random doubles (BENCHMARKS.md, session 25). An adversarial order that keeps the pivot
// near an end for many rounds hands the rest to std::nth_element (introselect: O(n log n) at
// worst). No NaN may be among the values (the callers leave NaN out or answer NaN first).
// The value read is the exact order statistic; of tied zeros of both signs either may be
// read, as with std::nth_element.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace jaxsubset {

namespace detail {

// the values below p (less: true) or at or below p (false) moved to the front, in order of
// position among themselves; how many
template <typename T, bool Less>
inline int64_t partition_front(T* a, int64_t n, T p) {
  int64_t j = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T v = a[i];
    const bool front = Less ? v < p : !(p < v);
    a[i] = a[j];
    a[j] = v;
    j += front;
  }
  return j;
}

template <typename T>
inline T median3(T a, T b, T c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

}  // namespace detail

// the k-th smallest (0-based) of a[0..n), 0 <= k < n, no NaN; a permuted as described above
template <typename T>
T select_kth(T* a, int64_t n, int64_t k) {
  int rounds = 0;
  while (n > 32) {
    if (++rounds > 64) {  // far past ~log(n) rounds: an adversarial order
      std::nth_element(a, a + k, a + n);
      return a[k];
    }
    const int64_t e = n / 8;
    using detail::median3;
    const T p = median3(median3(a[0], a[e], a[2 * e]), median3(a[3 * e], a[4 * e], a[5 * e]),
                        median3(a[6 * e], a[7 * e], a[n - 1]));
    const int64_t lt = detail::partition_front<T, true>(a, n, p);
    if (k < lt) {
      n = lt;
      continue;
    }
    const int64_t le = lt + detail::partition_front<T, false>(a + lt, n - lt, p);
    if (k < le) return p;  // a[lt..le) all equal p
    a += le;
    k -= le;
    n -= le;
  }
  std::sort(a, a + n);
  return a[k];
}

// the non-NaN values of yc[s..e) (stride C) into buf (resized to them), in order; how many
// were NaN (one store per value and no branch on the data)
template <typename T>
int64_t copy_held(const T* yc, int64_t C, int64_t s, int64_t e, std::vector<T>& buf) {
  buf.resize(static_cast<size_t>(e - s));
  T* out = buf.data();
  int64_t j = 0;
  for (int64_t i = s; i < e; ++i) {
    const T v = yc[i * C];
    out[j] = v;
    j += !std::isnan(v);
  }
  buf.resize(static_cast<size_t>(j));
  return (e - s) - j;
}

}  // namespace jaxsubset
