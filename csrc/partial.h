// The partial (counts, sum, extremes, central moments) of one index range, shared by the
// range kernel's per-range road (ranges.cc) and the sorted-x road of the bins kernel
// (bins.cc): one formula, so a chunk and a bin holding the same points give the same bits.
#pragma once

#include <cmath>
#include <cstdint>

#include "common.h"

namespace jaxsubset {

// One range [s, e) of channel yc (stride C): its partial in vectorised passes, L lanes of
// independent accumulators (point i in lane (i - s) % L), combined in a fixed order: the
// order depends on the range alone (never on the buffer's address or the other ranges), so
// results are deterministic and local; the moments agree with the reference road's within a
// few ulps, counts and extremes exactly. First the plain pass, as if every point were finite;
// a sum that is not finite (a NaN or an inf among the points, or an overflow) sends the range
// to the careful pass, which counts and leaves out the non-finite points.
template <typename T, bool SUM, bool EXT, int MOM>
Partial range_partial(const T* yc, int64_t C, int64_t s, int64_t e) {
  constexpr int L = 8;
  Partial p;
  p.n_all = e - s;
  double sa[L], za[L], mna[L], mxa[L];
  int64_t ba[L];
  auto reset = [&]() {
    for (int l = 0; l < L; ++l) {
      sa[l] = za[l] = 0.0;
      mna[l] = INFINITY;
      mxa[l] = -INFINITY;
      ba[l] = 0;
    }
  };
  // lanes over [s, e) (contiguous: whole blocks of L, then the tail in lane 0)
  auto lanes = [&](auto&& step) {
    int64_t i = s;
    if (C == 1) {
      for (; i + L <= e; i += L) {
        for (int l = 0; l < L; ++l) step(l, static_cast<double>(yc[i + l]));
      }
    }
    for (; i < e; ++i) step(0, static_cast<double>(yc[i * C]));
  };
  auto combine = [](const double* a) {
    double t = 0;
    for (int l = 0; l < L; ++l) t += a[l];
    return t;
  };
  double c = e > s ? static_cast<double>(yc[s * C]) : 0.0;  // the moments' shift
  reset();
  {  // written out (no lambda): the lanes stay in registers
    double a[L], z[L], lo[L], hi[L];
    for (int l = 0; l < L; ++l) {
      a[l] = z[l] = 0.0;
      lo[l] = INFINITY;
      hi[l] = -INFINITY;
    }
    int64_t i = s;
    if (C == 1) {
      for (; i + L <= e; i += L) {
        for (int l = 0; l < L; ++l) {
          const double x = static_cast<double>(yc[i + l]);
          a[l] += x;  // also for EXT alone: its finiteness says whether every point is
          if constexpr (MOM > 0) z[l] += x - c;  // finite
          if constexpr (EXT) {
            lo[l] = x < lo[l] ? x : lo[l];
            hi[l] = x > hi[l] ? x : hi[l];
          }
        }
      }
    }
    for (; i < e; ++i) {
      const double x = static_cast<double>(yc[i * C]);
      a[0] += x;
      if constexpr (MOM > 0) z[0] += x - c;
      if constexpr (EXT) {
        lo[0] = x < lo[0] ? x : lo[0];
        hi[0] = x > hi[0] ? x : hi[0];
      }
    }
    for (int l = 0; l < L; ++l) {
      sa[l] = a[l];
      za[l] = z[l];
      mna[l] = lo[l];
      mxa[l] = hi[l];
    }
  }
  double sum = combine(sa), zs = combine(za);
  const bool careful = !std::isfinite(sum) || (MOM > 0 && !std::isfinite(zs));
  if (careful) {
    // the shift: the first finite point (ranges.cc's)
    int64_t first = s;
    while (first < e && !std::isfinite(static_cast<double>(yc[first * C]))) ++first;
    c = first < e ? static_cast<double>(yc[first * C]) : 0.0;
    reset();
    lanes([&](int l, double x) {
      const bool fin = std::fabs(x) < INFINITY;  // false for NaN and +-inf
      ba[l] += !fin;
      sa[l] += fin ? x : 0.0;
      if constexpr (MOM > 0) za[l] += fin ? x - c : 0.0;
      if constexpr (EXT) {
        mna[l] = x < mna[l] ? x : mna[l];  // NaN never compares: left out, as ranges.cc
        mxa[l] = x > mxa[l] ? x : mxa[l];
      }
    });
    sum = combine(sa);
    zs = combine(za);
    for (int64_t i = s; i < e; ++i) {
      const double x = static_cast<double>(yc[i * C]);
      p.nan += std::isnan(x);
      p.pinf += x == INFINITY;
      p.ninf += x == -INFINITY;
    }
  }
  double mn = INFINITY, mx = -INFINITY;
  for (int l = 0; l < L; ++l) {
    mn = mna[l] < mn ? mna[l] : mn;
    mx = mxa[l] > mx ? mxa[l] : mx;
  }
  p.nf = p.n_all - p.nan - p.pinf - p.ninf;
  p.sum = SUM ? sum : 0.0;
  p.mn = mn;
  p.mx = mx;
  if constexpr (MOM > 0) {
    if (p.nf > 0) {
      const double mz = zs / static_cast<double>(p.nf);
      double a2[L], a3[L], a4[L];
      for (int l = 0; l < L; ++l) a2[l] = a3[l] = a4[l] = 0.0;
      auto dev = [&](int l, double d) {
        const double d2 = d * d;
        a2[l] += d2;
        if constexpr (MOM == 4) {
          a3[l] += d2 * d;
          a4[l] += d2 * d2;
        }
      };
      if (careful) {
        lanes([&](int l, double x) { dev(l, std::fabs(x) < INFINITY ? (x - c) - mz : 0.0); });
        p.m2 = combine(a2);
        p.m3 = combine(a3);
        p.m4 = combine(a4);
      } else {  // written out, as the plain pass above
        double b2[L], b3[L], b4[L];
        for (int l = 0; l < L; ++l) b2[l] = b3[l] = b4[l] = 0.0;
        int64_t i = s;
        if (C == 1) {
          for (; i + L <= e; i += L) {
            for (int l = 0; l < L; ++l) {
              const double d = (static_cast<double>(yc[i + l]) - c) - mz;
              const double d2 = d * d;
              b2[l] += d2;
              if constexpr (MOM == 4) {
                b3[l] += d2 * d;
                b4[l] += d2 * d2;
              }
            }
          }
        }
        for (; i < e; ++i) {
          const double d = (static_cast<double>(yc[i * C]) - c) - mz;
          const double d2 = d * d;
          b2[0] += d2;
          if constexpr (MOM == 4) {
            b3[0] += d2 * d;
            b4[0] += d2 * d2;
          }
        }
        p.m2 = combine(b2);
        p.m3 = combine(b3);
        p.m4 = combine(b4);
      }
    }
  }
  return p;
}

}  // namespace jaxsubset
