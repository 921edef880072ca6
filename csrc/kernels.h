// The statistic families' entry points, shared by the FFI handlers (module.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"

namespace jaxsubset {

// One result of one batch item: (K, C) values of T, or integer counts.
struct Out {
  void* base = nullptr;
  int64_t stat = 0;
  double q = 0;       // kQuantile's q
  bool integer = false;
  bool i64 = false;   // the integer width (the index dtype)

  template <typename T>
  void put(int64_t k, int64_t C, int64_t ch, T v) const {
    static_cast<T*>(base)[k * C + ch] = v;
  }
  void put_count(int64_t k, int64_t C, int64_t ch, int64_t v) const {
    if (i64) {
      static_cast<int64_t*>(base)[k * C + ch] = v;
    } else {
      static_cast<int32_t*>(base)[k * C + ch] = static_cast<int32_t>(v);
    }
  }
};

// Index ranges [start[k], start[k] + count[k]) of one batch item, clipped to [0, N).
// Read in place (int32 or int64: no widened copy, whose pages alone cost as much as a pass).
struct Ranges {
  const void* start;
  const void* count;
  bool i64;
  int64_t K;
  int64_t N;
  // sliding: no arrays; row k's window is [k + lead - win + 1, k + lead] cut to [0, len)
  // (fixed-count windows: pandas' trailing window ending `lead` rows later)
  bool sliding = false;
  int64_t win = 0, lead = 0, len = 0;
  int64_t st(int64_t k) const {
    if (sliding) {
      const int64_t s = k + lead - win + 1;
      return s < 0 ? 0 : (s > len ? len : s);
    }
    return i64 ? static_cast<const int64_t*>(start)[k] : static_cast<const int32_t*>(start)[k];
  }
  int64_t ct(int64_t k) const {
    if (sliding) {
      const int64_t e = k + lead + 1 < len ? k + lead + 1 : len;
      const int64_t s = st(k);
      return e > s ? e - s : 0;
    }
    return i64 ? static_cast<const int64_t*>(count)[k] : static_cast<const int32_t*>(count)[k];
  }
  // what scan() found, in one pass over the ranges
  bool valid = true;         // every range inside [0, N)
  bool is_monotone = true;   // both ends non-decreasing (empty ranges left out)
  int64_t total_ = 0, span_ = 0, longest_ = 0;
  void scan();
  // both ends non-decreasing (windows, sorted bins, chunks): the O(N) queue roads apply
  bool monotone() const { return is_monotone; }
  int64_t total() const { return total_; }  // sum of the counts
  int64_t longest() const { return longest_; }
  // many points in several ranges (more than 4 per point of their span), both ends
  // non-decreasing: the queue/heap roads; decided by the ranges alone (never N or values)
  bool overlapping() const { return is_monotone && total_ > 4 * span_; }
};

// Folded statistics (count, sum, mean, var, std, sem, min, max, first, last, skew, kurt)
// of channel `ch` of y (N, C) over the ranges.
template <typename T>
void folded_ranges(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                   bool omit, int64_t ddof);

// Order statistics (median, quantile) of channel `ch` over the ranges.
template <typename T>
void order_ranges(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                  bool omit);

// Fixed-count windows' order statistics on order.cc's sorted blocks, rows [k0, k1) alone:
// where sliding_order_splits(r) (r sliding; then order_ranges takes the same road, known
// without Ranges::scan), each row gets the bits of order_ranges over every row.
bool sliding_order_splits(const Ranges& r);
template <typename T>
void sliding_order_rows(const T* y, int64_t C, int64_t ch, const Ranges& r,
                        const std::vector<Out>& outs, bool omit, int64_t k0, int64_t k1);

// Fixed-count windows (sliding.cc): the statistics is_block_stat() names (count, sum, mean,
// var, std, sem, min, max) of channel `ch`, row k's window [k + lead - w + 1, k + lead] cut to
// [0, len); mp >= 0: finished for min_periods (count in T). The rows of the windows ending at
// e in [e0, e1) (e0 a multiple of w; e1 one too, or len), and with `tail` the rows whose
// windows reach past the data (k + lead >= len): [0, len) and tail make rows 0 .. N - 1.
// Any e0 gives every window the bits of the call from 0 (a piece rebuilds the block before it).
bool is_block_stat(int64_t stat);
template <typename T>
void sliding_folded(const T* y, int64_t C, int64_t ch, int64_t N, int64_t len, int64_t w,
                    int64_t lead, const std::vector<Out>& outs, bool omit, int64_t ddof,
                    int64_t mp, int64_t e0, int64_t e1, bool tail);
// the window ends of one piece of sliding_folded (a multiple of w, from w alone: never the
// thread count, so the pieces and their bits are the same for any number of threads)
int64_t sliding_piece(int64_t w);

// x-width trailing windows, one per row of sorted x (xwidth.cc), the pure-JAX resolver's
// rule: x of `xtype`, rows from `len` on empty. Float x: `w` is the width in the promoted
// float dtype (float64 where `w64`); integer x: (wrap, t, big) of _keys.int_width in x's
// dtype. lo_right: the lower bound is open (x > x[i] - width); hi_right: a window ends at
// its own row (else before the rows tied with it).
struct XWidth {
  enum Type { kF32, kF64, kI32, kI64 };
  const void* x;
  int xtype;
  const void* w;
  bool w64;
  int64_t N, len;
  bool lo_right, hi_right;
  // the upper operand (the lower one's layout: float k = 1, integer (wrap, t, big)): each
  // window ends by value at x[i] + upper (pandas' centred windows); null: at its own row
  const void* u = nullptr;
};
// start/count of every row
template <typename I>
void xwidth_bounds(const XWidth& a, I* start, I* count);
// Evenly spaced x: w where every window is the trailing one of w rows ([i - w + 1, i] cut
// at 0), read from the windows themselves (never from y). xwidth_fixed_start gives the
// candidate w (0: none) after walking the first rows, and `from`, the first row it left
// unchecked; w holds where xwidth_fixed_rows(a, w, i0, i1) is true for pieces covering
// [from, len) (each piece independent: any split, the same answer).
int64_t xwidth_fixed_start(const XWidth& a, int64_t& from);
bool xwidth_fixed_rows(const XWidth& a, int64_t width, int64_t i0, int64_t i1);
// the statistics the queue computes (count, sum, mean, var, std, sem, min, max)
bool is_queue_stat(int64_t stat);
// those statistics of channel `ch` of every row's window, finished for min_periods (every
// result in T, count too), bounds and queue in one pass
template <typename T>
void xwidth_folded(const XWidth& a, const T* y, int64_t C, int64_t ch,
                   const std::vector<Out>& outs, bool omit, int64_t ddof, int64_t mp);

// the pure-JAX roads' capacity rule for the order statistics (the same results on every
// road and platform): a range of more than `capacity` points gives NaN (capacity < 0: none)
template <typename T>
inline void capacity_rule(const Ranges& r, int64_t C, int64_t ch, const std::vector<Out>& outs,
                   int64_t capacity) {
  if (capacity < 0 || r.longest() <= capacity) return;
  for (const Out& o : outs) {
    if (!is_order(o.stat)) continue;
    for (int64_t k = 0; k < r.K; ++k) {
      if (r.ct(k) > capacity) o.put<T>(k, C, ch, nan_v<T>());
    }
  }
}

}  // namespace jaxsubset
