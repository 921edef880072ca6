// Fixed-count windows walked by a dedicated loop: count, sum, mean, var, std, sem, min, max
// (jaxsubset_sliding_stats; the other statistics go through ranges.cc / order.cc).
//
// Van Herk / Gil-Werman blocks: the rows are cut into blocks of w points; a window ending at
// position e of block j holds the suffix of block j - 1 after e - w and the prefix of block j
// up to e. For every block the prefix and suffix partials (sum, extremes, and the shifted
// Welford moments about a point of the partial) are built in one loop (two independent
// chains), and each window is the suffix (+) the prefix, combined by Chan's formula: a
// window is made only of partials of its own points (never a difference of running sums),
// so a value outside it (1e30, inf, NaN) leaves it bit-identical, and a window of zeros is 0.
//
// Where four blocks and the block before them are all finite, the four are built side by
// side in vector lanes (lanes.h; group()), each lane with the scalar road's operations, and
// their windows finished as the prefixes grow; a finite block pair otherwise takes
// vectorisable combine loops; the others (and the first block, and the windows cut at the
// end of the data) are finished through Partial and common.h's finish(), from partials built
// by the same arithmetic, so a window of finite points gets the same bits on every road.
#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels.h"
#include "lanes.h"

// (the lanes' vectors stay inside this file: none crosses an ABI boundary)
#pragma GCC diagnostic ignored "-Wpsabi"

namespace jaxsubset {

bool is_block_stat(int64_t s) {
  return s == kCount || s == kSum || s == kMean || s == kVar || s == kStd || s == kSem ||
         s == kMin || s == kMax;
}

namespace {

using lanes::Pair;
using lanes::PairAcc;
using lanes::Quad;

constexpr double kInf = std::numeric_limits<double>::infinity();

#if JAXSUBSET_AVX2_CLONE
// an environment variable set to off/0/false/no (any case)
inline bool env_off(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  std::string s(v);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "off" || s == "0" || s == "false" || s == "no";
}
#endif

#include "sliding_partials.h"

// blocks built side by side in vector lanes (group(): two Pairs)
constexpr int kGroup = 4;
// blocks up to this width: a group's results kept (in the cache) and written out contiguously
constexpr int64_t kTile = 256;
// (wider blocks one at a time: their partials would leave the cache, and the memory)
constexpr int64_t kGroupWidth = 1 << 16;

template <typename T>
class SlidingBlocks {
 public:
  // the windows ending at e in [e0, e1) (e0 a multiple of w, e1 one or len), and with `tail`
  // those reaching past the data
  SlidingBlocks(const T* y, int64_t C, int64_t ch, int64_t N, int64_t len, int64_t w,
                int64_t lead, const std::vector<Out>& outs, bool omit, int64_t ddof, int64_t mp,
                int64_t e0, int64_t e1, bool tail)
      : y_(y + ch), C_(C), ch_(ch), N_(N), len_(len), w_(w), lead_(lead), e0_(e0), e1_(e1),
        tail_(tail), outs_(outs), omit_(omit), ddof_(ddof), mp_(mp) {
    for (const Out& o : outs) {
      sum_ |= o.stat == kSum || o.stat == kMean;
      ext_ |= o.stat == kMin || o.stat == kMax;
      mom_ |= o.stat == kVar || o.stat == kStd || o.stat == kSem;
      want_min_ |= o.stat == kMin;
      want_max_ |= o.stat == kMax;
    }
    const int64_t bw = std::min(w, std::max<int64_t>(len, 1));
    inv_.resize(static_cast<size_t>(bw + 2));
    for (int64_t i = 1; i < bw + 2; ++i) inv_[i] = 1.0 / static_cast<double>(i);
    pre_.resize(1);  // (their arrays sized where first used)
    suf_.resize(2);
    vals_.resize(static_cast<size_t>(C == 1 ? 0 : bw));
    coef_.resize(static_cast<size_t>(bw));  // Chan's weight of window i of a block
    for (int64_t i = 0; i + 1 < bw; ++i) coef_[i] = chan_coef(w - 1 - i, i + 1);
  }

  void run() {
    if (sum_ && ext_ && mom_) return go<true, true, true>();
    if (sum_ && ext_) return go<true, true, false>();
    if (sum_ && mom_) return go<true, false, true>();
    if (ext_ && mom_) return go<false, true, true>();
    if (sum_) return go<true, false, false>();
    if (ext_) return go<false, true, false>();
    if (mom_) return go<false, false, true>();
    return go<false, false, false>();
  }

 private:
  const T* at(int64_t i) const { return y_ + i * C_; }

  bool finite_block(int64_t s, int64_t L) const {
    double acc = 0;
    const T* p = at(s);
    const int64_t C = C_;
#pragma omp simd reduction(+ : acc)
    for (int64_t i = 0; i < L; ++i) {
      const double x = static_cast<double>(p[i * C]);
      acc += x - x;  // NaN for a NaN or an infinity
    }
    return acc == 0;
  }

  // the prefix partials of [s, s + L) (pre[i]: [s, s + i]) and, with `suffix`, the suffix
  // ones (suf[i]: [s + i, s + L), suf[L] empty); with `counts` non-finite points are counted
  template <bool SUM, bool EXT, bool MOM>
  void build(int64_t s, int64_t L, bool suffix, bool counts, Side* pre, Side* suf) {
    pre->ensure(static_cast<size_t>(L + 1), SUM, EXT, MOM, counts);
    if (suffix) suf->ensure(static_cast<size_t>(L + 1), SUM, EXT, MOM, counts);
    Acc f, b;
    const double* inv = inv_.data();
    const T* p = at(s);
    const int64_t C = C_;
    if (suffix) b.store<SUM, EXT, MOM>(*suf, L, counts);
    if (!counts) {
      if (suffix) {
        for (int64_t i = 0; i < L; ++i) {
          f.add<SUM, EXT, MOM>(static_cast<double>(p[i * C]), inv);
          f.store<SUM, EXT, MOM>(*pre, i, false);
          b.add<SUM, EXT, MOM>(static_cast<double>(p[(L - 1 - i) * C]), inv);
          b.store<SUM, EXT, MOM>(*suf, L - 1 - i, false);
        }
      } else {
        for (int64_t i = 0; i < L; ++i) {
          f.add<SUM, EXT, MOM>(static_cast<double>(p[i * C]), inv);
          f.store<SUM, EXT, MOM>(*pre, i, false);
        }
      }
    } else {
      for (int64_t i = 0; i < L; ++i) {
        const double x = static_cast<double>(p[i * C]);
        if (std::isfinite(x)) f.add<SUM, EXT, MOM>(x, inv); else f.skip(x);
        f.store<SUM, EXT, MOM>(*pre, i, true);
      }
      if (suffix) {
        for (int64_t i = L - 1; i >= 0; --i) {
          const double x = static_cast<double>(p[i * C]);
          if (std::isfinite(x)) b.add<SUM, EXT, MOM>(x, inv); else b.skip(x);
          b.store<SUM, EXT, MOM>(*suf, i, true);
        }
      }
    }
    pre->c = f.c;
    pre->counted = counts;
    if (suffix) {
      suf->c = b.c;
      suf->counted = counts;
    }
  }

  // every statistic of row k from its partial (finish(), min_periods)
  void emit(int64_t k, const Partial& p) const {
    const int64_t cnt = omit_ ? p.n_all - p.nan : p.n_all;
    const T nan = nan_v<T>();
    for (const Out& o : outs_) {
      if (o.stat == kCount) {
        if (mp_ < 0) {
          o.put_count(k, C_, ch_, cnt);
        } else {
          o.put<T>(k, C_, ch_, p.n_all >= mp_ ? static_cast<T>(cnt) : nan);
        }
      } else {
        o.put<T>(k, C_, ch_, mp_ >= 0 && cnt < mp_ ? nan : finish<T>(o.stat, p, omit_, ddof_));
      }
    }
  }

  // rows of the windows ending in [s, s + L) (e >= lead), front = `prev` (or none), back =
  // `pre`, both counted, through Partial
  template <bool SUM, bool EXT, bool MOM>
  void combine_general(int64_t s, int64_t L, const Side* prev) {
    const Side& pre_ = this->pre_[0];
    for (int64_t i = std::max<int64_t>(0, lead_ - s); i < L; ++i) {
      const int64_t nfront = prev ? w_ - 1 - i : 0;  // points of the front (block before)
      Partial p;
      p.n_all = nfront + i + 1;
      int64_t na = 0, nb = pre_.n[i];
      p.nan = pre_.nan[i];
      p.pinf = pre_.pinf[i];
      p.ninf = pre_.ninf[i];
      if (prev) {
        na = prev->n[i + 1];
        p.nan += prev->nan[i + 1];
        p.pinf += prev->pinf[i + 1];
        p.ninf += prev->ninf[i + 1];
        chan(p, *prev, i + 1, pre_, i, na, nb, SUM, EXT, MOM);
      } else {
        if (SUM) p.sum = pre_.sum[i];
        if (EXT) {
          p.mn = pre_.mn[i];
          p.mx = pre_.mx[i];
        }
        if (MOM) p.m2 = pre_.q[i];
      }
      p.nf = na + nb;
      emit(s + i - lead_, p);
    }
  }

  // where a combine loop writes: the output itself where it is contiguous, else vals_
  T* target(const Out& o, int64_t s) {
    return C_ == 1 ? static_cast<T*>(o.base) + (s - lead_) : vals_.data();
  }
  void put_vals(int64_t s, int64_t i0, int64_t L, const Out& o) {
    if (C_ == 1) return;
    T* out = static_cast<T*>(o.base) + ch_;
    const int64_t base = s - lead_;
    for (int64_t i = i0; i < L; ++i) out[(base + i) * C_] = vals_[i];
  }

  // every point of [s - w, s + L) finite: the windows [s + i - w + 1, s + i], w points each,
  // a loop per statistic with finish()'s arithmetic (so the same bits as combine_general)
  template <bool SUM, bool EXT, bool MOM>
  void combine_finite(int64_t s, int64_t L, const Side& f, const Side& b) {
    const int64_t i0 = std::max<int64_t>(0, lead_ - s);
    if (i0 >= L) return;
    const T nan = nan_v<T>();
    const int64_t n = w_;
    const bool none = mp_ >= 0 && n < mp_;  // every window under min_periods
    for (const Out& o : outs_) {
      const int64_t stat = o.stat;
      T* v = target(o, s);
      if (stat == kCount && mp_ < 0) {
        for (int64_t i = i0; i < L; ++i) o.put_count(s + i - lead_, C_, ch_, n);
        continue;
      }
      if (none || stat == kCount) {
        const T c = none ? nan : static_cast<T>(n);
        for (int64_t i = i0; i < L; ++i) v[i] = c;
      } else if (stat == kSum || stat == kMean) {
        if constexpr (SUM) {
          const T tn = static_cast<T>(n);
          const double* fs = f.sum.data() + 1;
          const double* bs = b.sum.data();
          if (stat == kSum) {
            for (int64_t i = i0; i < L; ++i) v[i] = static_cast<T>(fs[i] + bs[i]);
          } else {
            for (int64_t i = i0; i < L; ++i) v[i] = static_cast<T>(fs[i] + bs[i]) / tn;
          }
        }
      } else if (stat == kMin || stat == kMax) {
        if constexpr (EXT) {
          if (stat == kMin) {
            const double* fm = f.mn.data() + 1;
            const double* bm = b.mn.data();
            for (int64_t i = i0; i < L; ++i) v[i] = static_cast<T>(bm[i] < fm[i] ? bm[i] : fm[i]);
          } else {
            const double* fm = f.mx.data() + 1;
            const double* bm = b.mx.data();
            for (int64_t i = i0; i < L; ++i) v[i] = static_cast<T>(bm[i] > fm[i] ? bm[i] : fm[i]);
          }
        }
      } else if constexpr (MOM) {
        const double dc = b.c - f.c;
        const double* fq = f.q.data() + 1;
        const double* fmm = f.m.data() + 1;
        const double* bq = b.q.data();
        const double* bmm = b.m.data();
        const int64_t denom = n - ddof_;
        const T td = static_cast<T>(denom);
        const T sq = std::sqrt(static_cast<T>(n));
        const double* coef = coef_.data();
        const int64_t L1 = std::min(L, w_ - 1);  // (i = w - 1: the front is empty)
        for (int64_t i = i0; i < L1; ++i) {
          const double d = dc + (bmm[i] - fmm[i]);
          const double m2 = fq[i] + bq[i] + d * d * coef[i];
          T var = denom > 0 ? static_cast<T>(m2) / td : nan;
          if (stat != kVar) {
            var = var > 0 ? std::sqrt(var) : var;
            if (stat == kSem) var = var / sq;
          }
          v[i] = var;
        }
        for (int64_t i = std::max(i0, L1); i < L; ++i) {
          T var = denom > 0 ? static_cast<T>(bq[i]) / td : nan;
          if (stat != kVar) {
            var = var > 0 ? std::sqrt(var) : var;
            if (stat == kSem) var = var / sq;
          }
          v[i] = var;
        }
      }
      put_vals(s, i0, L, o);
    }
  }

  // the rows whose windows reach past the data (k + lead >= len): [k + lead - w + 1, len),
  // suffixes of the data, from a partial growing backwards
  template <bool SUM, bool EXT, bool MOM>
  void tail() {
    Acc a;
    const double* inv = inv_.data();
    int64_t next = len_;  // the partial holds [next, len)
    for (int64_t k = N_ - 1; k >= 0 && k + lead_ >= len_; --k) {
      const int64_t s = std::min(std::max<int64_t>(k + lead_ - w_ + 1, 0), len_);
      for (; next > s; --next) {
        const double x = static_cast<double>(*at(next - 1));
        if (std::isfinite(x)) a.add<SUM, EXT, MOM>(x, inv); else a.skip(x);
      }
      Partial p;
      p.n_all = len_ - s;
      p.nan = a.nan;
      p.pinf = a.pinf;
      p.ninf = a.ninf;
      p.nf = a.n;
      p.sum = a.sum;
      p.mn = a.mn;
      p.mx = a.mx;
      p.m2 = a.q;
      emit(k, p);
    }
  }

  // lanes(): the windows of the four blocks from s (row k0 on) from the tiles to the results
  // (contiguous stores where the result is)
  void flush(int64_t k0) {
    const T* tile = tile_.data();
    const int64_t n = 4 * w_;
    for (const Out& o : outs_) {
      if (o.stat == kCount && mp_ < 0) {
        for (int64_t k = k0; k < k0 + n; ++k) o.put_count(k, C_, ch_, w_);
        continue;
      }
      T* out = static_cast<T*>(o.base) + ch_ + k0 * C_;
      if (C_ == 1) {
        std::copy(tile, tile + n, out);
      } else {
        for (int64_t k = 0; k < n; ++k) out[k * C_] = tile[k];
      }
      tile += n;
    }
  }

  // kGroup = 4 full blocks from s, every point finite, the block before them finite (its
  // suffix partials in suf_[0]): blocks 2h, 2h + 1 side by side in the lanes of a Pair, in
  // two passes. The first builds the suffix partials of the four blocks backwards into rows_
  // (row i: the four blocks' [i, w) side by side) and checks every point; the second builds
  // the prefix partials forwards and finishes each window as it goes, the suffix of block
  // g - 1 (+) the prefix of block g, block -1 being suf_[0]; it leaves the last block's suffix
  // in suf_[0] for the next block. The same operations as build() and combine_finite(), lane
  // by lane. False (no window written) where a point is not finite.
  template <bool SUM, bool EXT, bool MOM>
  bool group(int64_t s) {
    if constexpr (EXT) {
      if (want_min_ && !want_max_) return lanes<SUM, true, false, MOM>(s);
      if (!want_min_ && want_max_) return lanes<SUM, false, true, MOM>(s);
      return lanes<SUM, true, true, MOM>(s);
    } else {
      return lanes<SUM, false, false, MOM>(s);
    }
  }

  // the group's two passes, compiled twice where the target is x86-64: for any x86-64 CPU,
  // and for AVX2 ones (chosen at run time), whose 4-wide division and square root halve the
  // finishing (the same IEEE operations: the same bits)
  template <bool SUM, bool MN, bool MX, bool MOM>
  bool lanes(int64_t s) {
#if JAXSUBSET_AVX2_CLONE
    if (avx2_) return lanes_avx2<SUM, MN, MX, MOM>(s);
#endif
    return lanes_body<SUM, MN, MX, MOM, false>(s);
  }
#if JAXSUBSET_AVX2_CLONE
  template <bool SUM, bool MN, bool MX, bool MOM>
  __attribute__((target("avx2"))) bool lanes_avx2(int64_t s) {
    return lanes_body<SUM, MN, MX, MOM, true>(s);
  }
#endif

  template <bool SUM, bool MN, bool MX, bool MOM, bool WIDE>
  __attribute__((always_inline)) inline bool lanes_body(int64_t s);  // sliding_lanes-inl.h

  // one block [s, s + L): the front suf_[0], the block's partials pre_[0] and suf_[1]
  template <bool SUM, bool EXT, bool MOM>
  void block(int64_t s, int64_t L, bool prev_finite, bool fin) {
    const bool suffix = s + w_ < e1_;  // a next block of this piece reads this one's suffix
    if (s > 0 && fin && prev_finite) {
      build<SUM, EXT, MOM>(s, L, suffix, false, &pre_[0], &suf_[1]);
      combine_finite<SUM, EXT, MOM>(s, L, suf_[0], pre_[0]);
    } else {
      if (s > 0 && !suf_[0].counted) {  // the front again, with counts
        build<SUM, EXT, MOM>(s - w_, w_, true, true, &suf_[1], &suf_[0]);  // (suf_[1]: scratch)
      }
      build<SUM, EXT, MOM>(s, L, suffix, true, &pre_[0], &suf_[1]);
      combine_general<SUM, EXT, MOM>(s, L, s > 0 ? &suf_[0] : nullptr);
    }
    std::swap(suf_[0], suf_[1]);
  }

  // a piece's front (s > 0, a multiple of w): the suffix partials of the block [s - w, s)
  // in suf_[0], as the loop from 0 leaves them: a finite block by build()'s uncounted chain
  // (its suffix alone), else counted. Whether the block is finite.
  template <bool SUM, bool EXT, bool MOM>
  bool front(int64_t s) {
    const int64_t f = s - w_;
    if (!finite_block(f, w_)) {
      build<SUM, EXT, MOM>(f, w_, true, true, &suf_[1], &suf_[0]);  // (suf_[1]: scratch)
      return false;
    }
    Side& sd = suf_[0];
    sd.ensure(static_cast<size_t>(w_ + 1), SUM, EXT, MOM, false);
    Acc b;
    const double* inv = inv_.data();
    const T* p = at(f);
    const int64_t C = C_;
    b.store<SUM, EXT, MOM>(sd, w_, false);
    for (int64_t i = w_ - 1; i >= 0; --i) {
      b.add<SUM, EXT, MOM>(static_cast<double>(p[i * C]), inv);
      b.store<SUM, EXT, MOM>(sd, i, false);
    }
    sd.c = b.c;
    sd.counted = false;
    return true;
  }

  template <bool SUM, bool EXT, bool MOM>
  void go() {
    // the windows ending at e in [e0, e1) with e >= lead (row e - lead), block by block,
    // kGroup blocks at a time where they and the block before are finite. Every window is
    // the suffix of the block before (+) the prefix of its own, so a piece from e0 > 0 first
    // rebuilds the suffixes of the block before it: its windows get the bits of the loop
    // from 0 (each road computes the same partials with the same operations)
    bool prev_finite = e0_ > 0 && front<SUM, EXT, MOM>(e0_);
    int64_t single = 0;  // blocks to take one at a time (after a group found a non-finite point)
    for (int64_t s = e0_; s < e1_;) {
      if (w_ <= kGroupWidth && s > 0 && s >= lead_ && prev_finite && single == 0 &&
          s + kGroup * w_ <= e1_) {
        if (group<SUM, EXT, MOM>(s)) {
          s += kGroup * w_;
          continue;
        }
        single = kGroup;
      }
      const int64_t L = std::min(w_, e1_ - s);
      const bool fin = finite_block(s, L);
      block<SUM, EXT, MOM>(s, L, prev_finite, fin);
      prev_finite = fin;
      single = single > 0 ? single - 1 : 0;
      s += L;
    }
    if (tail_) tail<SUM, EXT, MOM>();
  }

  const T* y_;
  int64_t C_, ch_, N_, len_, w_, lead_, e0_, e1_;
  bool tail_;
  const std::vector<Out>& outs_;
  bool omit_;
  int64_t ddof_, mp_;
  bool sum_ = false, ext_ = false, mom_ = false, want_min_ = false, want_max_ = false;
#if JAXSUBSET_AVX2_CLONE
  // JAXSUBSET_NATIVE_AVX2=off runs the portable loop on an AVX2 CPU too (read per call, no
  // global state): the tests compare the two loops' bits on the machine that runs them
  bool avx2_ = __builtin_cpu_supports("avx2") && !env_off("JAXSUBSET_NATIVE_AVX2");
#endif
  std::vector<double> inv_, coef_;
  std::vector<Side> pre_, suf_;  // a block's prefix side; the front, then the block's suffix
  std::vector<double> rows_[5];   // group(): sum, min, max, m, q of four suffixes a row
  std::vector<T> tile_;           // group(): its windows' results, per statistic and block
  std::vector<T> vals_;
};

#include "sliding_lanes-inl.h"  // SlidingBlocks::lanes_body

}  // namespace

int64_t sliding_piece(int64_t w) {
  // whole blocks, at least kPieceBlocks of them (a piece rebuilds the suffixes of the block
  // before it: a small part of its work) and kPieceRows rows (shorter data: one piece)
  constexpr int64_t kPieceRows = int64_t{1} << 16, kPieceBlocks = 32;
  if (w < 1) return kPieceRows;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (w > kMax / kPieceBlocks) return kMax;
  return std::max(kPieceBlocks, (kPieceRows + w - 1) / w) * w;
}

template <typename T>
void sliding_folded(const T* y, int64_t C, int64_t ch, int64_t N, int64_t len, int64_t w,
                    int64_t lead, const std::vector<Out>& outs, bool omit, int64_t ddof,
                    int64_t mp, int64_t e0, int64_t e1, bool tail) {
  SlidingBlocks<T> blocks(y, C, ch, N, len, w, lead, outs, omit, ddof, mp, e0, e1, tail);
  blocks.run();
}

#define JAXSUBSET_SLIDING(T)                                                                   \
  template void sliding_folded<T>(const T*, int64_t, int64_t, int64_t, int64_t, int64_t,     \
                                  int64_t, const std::vector<Out>&, bool, int64_t, int64_t,  \
                                  int64_t, int64_t, bool);
JAXSUBSET_SLIDING(float)
JAXSUBSET_SLIDING(double)
#undef JAXSUBSET_SLIDING

}  // namespace jaxsubset
