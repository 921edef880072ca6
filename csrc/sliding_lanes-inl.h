// SlidingBlocks::lanes_body, the group pass of sliding.cc (four blocks in vector lanes): its
// member definition, kept apart from the class for size. Included by sliding.cc only, inside
// its anonymous namespace, after the class and before the explicit instantiations.
#pragma once

template <typename T>
template <bool SUM, bool MN, bool MX, bool MOM, bool WIDE>
inline bool SlidingBlocks<T>::lanes_body(int64_t s) {
  const int64_t w = w_, C = C_, wc = w * C;
  const size_t rows = static_cast<size_t>(4 * (w + 1));
  if (w <= kTile && tile_.size() < 4 * w * outs_.size()) tile_.resize(4 * w * outs_.size());
  enum { kS, kMn, kMx, kM, kQ };
  const bool want[5] = {SUM, MN, MX, MOM, MOM};
  double* R[5];
  for (int f = 0; f < 5; ++f) {
    if (want[f] && rows_[f].size() < rows) rows_[f].resize(rows);
    R[f] = rows_[f].data();
  }
  const T* p = at(s);
  const double* inv = inv_.data();
  auto load = [p, wc, C](int64_t i, Pair& a, Pair& b) {
    const T* q = p + i * C;
    a = Pair{static_cast<double>(q[0]), static_cast<double>(q[wc])};
    b = Pair{static_cast<double>(q[2 * wc]), static_cast<double>(q[3 * wc])};
  };
  using Acc2 = PairAcc<SUM, MN, MX, MOM>;
  auto put = [&R](int64_t i, const Acc2& a, const Acc2& b) {
    auto two = [i](double* r, Pair u, Pair v) {
      std::memcpy(r + 4 * i, &u, sizeof(Pair));
      std::memcpy(r + 4 * i + 2, &v, sizeof(Pair));
    };
    if constexpr (SUM) two(R[kS], a.sum, b.sum);
    if constexpr (MN) two(R[kMn], a.mn, b.mn);
    if constexpr (MX) two(R[kMx], a.mx, b.mx);
    if constexpr (MOM) {
      two(R[kM], a.m, b.m);
      two(R[kQ], a.q, b.q);
    }
  };
  // pass 1: the suffixes, [i, w) of each block; row w: the empty ones
  Acc2 ba, bb;
  put(w, ba, bb);
  Pair x, y, bad{};  // bad: x - x summed, NaN where a lane held a NaN or an infinity
  load(w - 1, x, y);
  bad += (x - x) + (y - y);
  ba.start(x);
  bb.start(y);
  put(w - 1, ba, bb);
  const T* next = p + 4 * wc;  // the next group's points, fetched ahead
  const int64_t ahead = std::max<int64_t>(1, 64 / static_cast<int64_t>(sizeof(T)) / 4);
  for (int64_t i = w - 2; i >= 0; --i) {
    if (i % ahead == 0) __builtin_prefetch(next + i * 4 * C);
    load(i, x, y);
    bad += (x - x) + (y - y);
    ba.add(x, inv[w - i]);
    bb.add(y, inv[w - i]);
    put(i, ba, bb);
  }
  if (!(bad[0] == 0 && bad[1] == 0)) return false;
  // pass 2: the prefixes [0, i] and the windows ending at i, w points each
  Side& fr = suf_[0];
  double* F[5] = {fr.sum.data(), fr.mn.data(), fr.mx.data(), fr.m.data(), fr.q.data()};
  const Pair cfa{fr.c, ba.c[0]}, cfb{ba.c[1], bb.c[0]};  // the fronts' shifts
  const T nan = nan_v<T>();
  const bool none = mp_ >= 0 && w < mp_;  // every window under min_periods
  const int64_t denom = w - ddof_;
  const T tn = static_cast<T>(w), td = static_cast<T>(denom), sq = std::sqrt(tn);
  const double* coef = coef_.data();
  const int64_t k0 = s - lead_;  // the row of the window ending at s
  Acc2 fa, fb;
  const bool tiled = w <= kTile;  // (else each window written where it goes)
  for (int64_t i = 0; i < w; ++i) {
    load(i, x, y);
    if (i == 0) {
      fa.start(x);
      fb.start(y);
    } else {
      fa.add(x, inv[i + 1]);
      fb.add(y, inv[i + 1]);
    }
    // the fronts: [i + 1, w) of blocks -1, 0 | 1, 2 (lanes of a, b); then block 3's
    // becomes block -1's for the next group
    const int64_t r = 4 * (i + 1);
    auto front = [&](int f, Pair& a, Pair& b) {
      a = Pair{F[f][i + 1], R[f][r]};
      std::memcpy(&b, R[f] + r + 1, sizeof(Pair));
      F[f][i + 1] = R[f][r + 3];
    };
    Pair sa{}, sb{}, lo_a{}, lo_b{}, hi_a{}, hi_b{}, va{}, vb{};
    if constexpr (SUM) {
      Pair a, b;
      front(kS, a, b);
      sa = a + fa.sum;
      sb = b + fb.sum;
    }
    if constexpr (MN) {
      Pair a, b;
      front(kMn, a, b);
      lo_a = fa.mn < a ? fa.mn : a;
      lo_b = fb.mn < b ? fb.mn : b;
    }
    if constexpr (MX) {
      Pair a, b;
      front(kMx, a, b);
      hi_a = fa.mx > a ? fa.mx : a;
      hi_b = fb.mx > b ? fb.mx : b;
    }
    if constexpr (MOM) {
      Pair ma, mb, qa, qb;
      front(kM, ma, mb);
      front(kQ, qa, qb);
      if (i + 1 < w) {  // Chan's formula (at i = w - 1 the front is empty)
        const Pair da = (fa.c - cfa) + (fa.m - ma), db = (fb.c - cfb) + (fb.m - mb);
        va = qa + fa.q + da * da * coef[i];
        vb = qb + fb.q + db * db * coef[i];
      } else {
        va = fa.q;
        vb = fb.q;
      }
    }
    // every statistic of the four windows, as combine_finite()
    T* tile = tile_.data();  // the windows of every statistic, block by block
    for (const Out& o : outs_) {
      const int64_t stat = o.stat;
      if (stat == kCount && mp_ < 0) {
        if (!tiled) {
          for (int g = 0; g < 4; ++g) o.put_count(k0 + g * w + i, C, ch_, w);
        }
        continue;
      }
      using Q = Quad<T, WIDE>;
      Q v;
      if (none || stat == kCount) {
        v = Q::all(none ? nan : tn);
      } else if (stat == kSum || stat == kMean) {
        v = Q::of(sa, sb);
        if (stat == kMean) v = v / tn;
      } else if (stat == kMin) {
        v = Q::of(lo_a, lo_b);
      } else if (stat == kMax) {
        v = Q::of(hi_a, hi_b);
      } else if (denom <= 0) {
        v = Q::all(nan);
      } else {
        v = Q::of(va, vb) / td;
        if (stat != kVar) {
          v = v.sqrt_positive();
          if (stat == kSem) v = v / sq;
        }
      }
      if (tiled) {
        for (int g = 0; g < 4; ++g) tile[g * w + i] = v[g];
        tile += 4 * w;
      } else {
        T* out = static_cast<T*>(o.base) + ch_ + (k0 + i) * C;
        for (int g = 0; g < 4; ++g) out[g * wc] = v[g];
      }
    }
  }
  if (tiled) flush(k0);
  for (int f = 0; f < 5; ++f) {
    if (want[f]) F[f][0] = R[f][3];
  }
  fr.c = bb.c[1];
  fr.counted = false;
  return true;
}
