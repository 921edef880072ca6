// The partials of sliding.cc's blocks (Side: one side of a block, by position; Acc: a
// running partial) and Chan's combination of two of them. Included by sliding.cc only (inside
// its anonymous namespace): one translation unit, no symbol exported.
#pragma once

// The partials of one side of a block, by position (see SlidingBlocks).
struct Side {
  std::vector<double> sum, mn, mx, m, q;
  std::vector<int64_t> n, nan, pinf, ninf;
  double c = 0;          // the shift of m, q: a point of every non-empty partial
  bool counted = false;  // n, nan, pinf, ninf filled (built with non-finite points)
  // room for `len` partials of what is kept (only that: a window may be as long as the data)
  void ensure(size_t len, bool s, bool e, bool mo, bool counts) {
    auto grow = [len](auto& v, bool want) {
      if (want && v.size() < len) v.resize(len);
    };
    grow(sum, s);
    grow(mn, e);
    grow(mx, e);
    grow(m, mo);
    grow(q, mo);
    for (auto* v : {&n, &nan, &pinf, &ninf}) grow(*v, counts);
  }
};

// A running partial: `add` a finite point, `skip` a non-finite one (counted, never added).
struct Acc {
  double sum = 0, mn = kInf, mx = -kInf, s1 = 0, m = 0, q = 0, c = 0;
  int64_t n = 0, nan = 0, pinf = 0, ninf = 0;

  template <bool SUM, bool EXT, bool MOM>
  inline void add(double x, const double* inv) {
    ++n;
    if constexpr (SUM) sum += x;
    if constexpr (EXT) {
      mn = x < mn ? x : mn;
      mx = x > mx ? x : mx;
    }
    if constexpr (MOM) {
      // Welford's M2 with the mean of (x - c) taken from its running sum: two short chains
      if (n == 1) {
        c = x;
      } else {
        more(x, inv);
      }
    }
  }
  inline void more(double x, const double* inv) {
    const double z = x - c;
    s1 += z;
    const double mnew = s1 * inv[n];
    q += std::max((z - m) * (z - mnew), 0.0);  // >= 0 but for rounding
    m = mnew;
  }
  inline void skip(double x) {
    if (std::isnan(x)) {
      ++nan;
      return;
    }
    if (x > 0) ++pinf; else ++ninf;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  template <bool SUM, bool EXT, bool MOM>
  inline void store(Side& sd, int64_t at, bool counts) const {
    if constexpr (SUM) sd.sum[at] = sum;
    if constexpr (EXT) {
      sd.mn[at] = mn;
      sd.mx[at] = mx;
    }
    if constexpr (MOM) {
      sd.m[at] = m;
      sd.q[at] = q;
    }
    if (counts) {
      sd.n[at] = n;
      sd.nan[at] = nan;
      sd.pinf[at] = pinf;
      sd.ninf[at] = ninf;
    }
  }
};

// na * nb / (na + nb), the weight of Chan's term
inline double chan_coef(int64_t na, int64_t nb) {
  return static_cast<double>(na) * (static_cast<double>(nb) / static_cast<double>(na + nb));
}

// Combine two partials (front: the earlier points) into a Partial; `na`/`nb` finite counts.
inline void chan(Partial& p, const Side& f, int64_t i, const Side& b, int64_t j, int64_t na,
                 int64_t nb, bool sum, bool ext, bool mom) {
  if (sum) p.sum = f.sum[i] + b.sum[j];
  if (ext) {
    p.mn = b.mn[j] < f.mn[i] ? b.mn[j] : f.mn[i];
    p.mx = b.mx[j] > f.mx[i] ? b.mx[j] : f.mx[i];
  }
  if (mom) {
    if (na == 0 || nb == 0) {
      p.m2 = na == 0 ? b.q[j] : f.q[i];
    } else {
      const double d = (b.c - f.c) + (b.m[j] - f.m[i]);
      p.m2 = f.q[i] + b.q[j] + d * d * chan_coef(na, nb);
    }
  }
}
