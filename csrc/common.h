// Shared pieces of jaxsubset's native CPU kernels: statistic codes, batch strides, the
// finishing conventions of src/jaxsubset/_statistics/_registry.py.
//
// Every kernel is a pure function of its buffers and attributes (no global state); leading
// batch dimensions are looped here, so `vmap` is one call (vmap_method="expand_dims": an
// unbatched operand keeps size-1 batch dimensions, read with stride 0).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "xla/ffi/api/ffi.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace jaxsubset {

namespace ffi = xla::ffi;

// Statistic codes: the order of _native/_api.py's CODES.
enum Stat : int64_t {
  kCount = 0,
  kSum = 1,
  kMean = 2,
  kVar = 3,
  kStd = 4,
  kSem = 5,
  kMin = 6,
  kMax = 7,
  kFirst = 8,
  kLast = 9,
  kSkew = 10,
  kKurt = 11,
  kMedian = 12,
  kQuantile = 13,
  kNumStats = 14,
};

inline bool is_order(int64_t s) { return s == kMedian || s == kQuantile; }

// Asks Linux for transparent huge pages under a large result buffer before the kernel first
// writes it. XLA's CPU client allocates each result afresh (glibc maps anything this large
// with its own mmap and unmaps it when freed), so every call would otherwise fault it in
// 4 KiB at a time: at 1e7 float64 results about 20,000 faults, more than the kernel's own
// pass (NumPy advises its large arrays the same way). Only the 2 MiB-aligned interior of a
// buffer of at least 8 MiB is advised: the advice changes which pages back the memory,
// never its contents, and a failure (THP off, an older kernel) is ignored.
inline void advise_huge(const ffi::AnyBuffer& buf) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{1} << 21;
  size_t bytes = 1;
  switch (buf.element_type()) {  // (from the dimensions: the oldest FFI headers we build on)
    case ffi::DataType::F64: case ffi::DataType::S64: case ffi::DataType::U64: bytes = 8; break;
    case ffi::DataType::F32: case ffi::DataType::S32: case ffi::DataType::U32: bytes = 4; break;
    case ffi::DataType::F16: case ffi::DataType::BF16: case ffi::DataType::S16:
    case ffi::DataType::U16: bytes = 2; break;
    default: break;
  }
  for (int64_t d : buf.dimensions()) bytes *= static_cast<size_t>(d);
  if (bytes < 4 * kHuge) return;
  const uintptr_t p = reinterpret_cast<uintptr_t>(buf.untyped_data());
  // a buffer starting in the first 4 KiB page of a 2 MiB boundary is the start of its own
  // mapping (the allocator's header before it, in the same page): that huge page is its own
  const uintptr_t lo = (p & (kHuge - 1)) < 4096 ? p & ~(kHuge - 1) : (p + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hi = (p + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)buf;
#endif
}

template <typename T>
constexpr T nan_v() {
  return std::numeric_limits<T>::quiet_NaN();
}

// Offsets of one operand's batch item: its leading `nb` dimensions are either the result's
// or 1 (read with stride 0).
struct BatchMap {
  std::vector<int64_t> out_dims;  // the result's batch dimensions
  std::vector<int64_t> strides;   // the operand's stride per batch dimension (0 where size 1)

  // dims: the operand's dimensions; nb: batch dimensions; item: elements per batch item
  static ffi::ErrorOr<BatchMap> make(ffi::Span<const int64_t> dims, size_t nb,
                                     const std::vector<int64_t>& out_dims, int64_t item,
                                     const char* name) {
    BatchMap m;
    m.out_dims = out_dims;
    if (dims.size() < nb) {
      return ffi::Unexpected(
          ffi::Error::InvalidArgument(std::string("jaxsubset: operand ") + name + " lacks batch dimensions"));
    }
    m.strides.assign(nb, 0);
    int64_t stride = item;
    for (size_t i = nb; i-- > 0;) {
      int64_t d = dims[i];
      if (d != 1 && d != out_dims[i]) {
        return ffi::Unexpected(ffi::Error::InvalidArgument(
            std::string("jaxsubset: operand ") + name + " has a batch dimension that is neither 1 nor the result's"));
      }
      m.strides[i] = d == 1 ? 0 : stride;
      stride *= d;
    }
    return m;
  }

  int64_t offset(int64_t b) const {
    int64_t off = 0;
    for (size_t i = out_dims.size(); i-- > 0;) {
      int64_t d = out_dims[i];
      off += (b % d) * strides[i];
      b /= d;
    }
    return off;
  }
};

// What a range's statistics are finished from (the conventions of _registry.py):
// n_all points, `nan` of them NaN, `pinf`/`ninf` infinite; the finite ones' count `nf`,
// plain sum `sum`, central moments m2..m4; min/max over the non-NaN values.
struct Partial {
  int64_t n_all = 0, nan = 0, pinf = 0, ninf = 0, nf = 0;
  double sum = 0, m2 = 0, m3 = 0, m4 = 0;
  double mn = 0, mx = 0;
};

// skew / kurt from the central moments, as _moments.shape_statistic
inline double shape_statistic(bool skew, int64_t n, double m2, double m3, double m4, bool bad,
                              bool is_f32) {
  const int64_t need = skew ? 3 : 4;
  double mk = skew ? m3 : m4;
  if (bad || n < need || !(m2 > 0) || !std::isfinite(m2) || !std::isfinite(mk)) return nan_v<double>();
  double den = skew ? m2 * std::sqrt(m2) : m2 * m2;
  if (is_f32 && !std::isfinite(static_cast<float>(den))) return nan_v<double>();
  if (!std::isfinite(den)) return nan_v<double>();
  double nf = static_cast<double>(n), res;
  if (skew) {
    res = std::sqrt(nf * (nf - 1)) / (nf - 2) * (std::sqrt(nf) * mk / den);
  } else {
    double g2 = nf * mk / den - 3;
    res = (nf - 1) / ((nf - 2) * (nf - 3)) * ((nf + 1) * g2 + 6);
  }
  return std::isfinite(res) ? res : nan_v<double>();
}

// One folded statistic of a range from its partial (not first/last, not the order ones).
template <typename T>
inline T finish(int64_t stat, const Partial& p, bool omit, int64_t ddof) {
  const int64_t cnt = omit ? p.n_all - p.nan : p.n_all;
  const bool poisoned = !omit && p.nan > 0;
  const bool bad = poisoned || p.pinf + p.ninf > 0;
  const T nan = nan_v<T>();
  auto sum = [&]() -> double {
    if (poisoned || (p.pinf && p.ninf)) return nan_v<double>();
    if (p.pinf) return INFINITY;
    if (p.ninf) return -INFINITY;
    return p.sum;
  };
  // divided in T, as the reference divides its T sums
  auto var = [&]() -> T {
    int64_t denom = cnt - ddof;
    if (bad || denom <= 0) return nan;
    return static_cast<T>(p.m2) / static_cast<T>(denom);
  };
  switch (stat) {
    case kSum:
      return static_cast<T>(sum());
    case kMean:
      if (cnt <= 0 || poisoned) return nan;
      // the sum rounded to T first, divided in T, as the reference
      return static_cast<T>(sum()) / static_cast<T>(cnt);
    case kVar:
      return var();
    case kStd:
    case kSem: {
      T v = var();
      T s = v > 0 ? std::sqrt(v) : v;
      if (stat == kStd) return s;
      return s / std::sqrt(static_cast<T>(cnt > 0 ? cnt : 1));
    }
    case kMin:
      return (poisoned || cnt <= 0) ? nan : static_cast<T>(p.mn);
    case kMax:
      return (poisoned || cnt <= 0) ? nan : static_cast<T>(p.mx);
    case kSkew:
    case kKurt: {
      double r = shape_statistic(stat == kSkew, cnt, p.m2, p.m3, p.m4, bad, sizeof(T) == 4);
      return static_cast<T>(r);
    }
    default:
      return nan;
  }
}

}  // namespace jaxsubset
