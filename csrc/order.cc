// Order statistics over index ranges: median (the mean of the two middle values) and the
// q-quantile (NumPy's linear method), as src/jaxsubset/_subsets.py's median/quantile.
//
// - Ranges that overlap with both ends non-decreasing (windows): a double heap (a max-heap of
//   the lower part, a min-heap of the upper one, every point's heap slot known), points
//   entering and leaving in order: O(log w) per point, as bottleneck's move_median, for any
//   window sizes.
//   Fixed-count windows (most sizes) instead: sorted blocks (order_blocks.h), each block of
//   w points sorted once, O(log w) a point from the sort alone and O(1) list steps.
// - Other ranges: the range's values copied and partially sorted (select.h): O(count).
// The values read are the exact order statistics, so results are bit for bit the reference
// road's; NaN readings are never ranked (a range holding one gives NaN unless omitted).
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels.h"
#include "order_blocks.h"
#include "select.h"

namespace jaxsubset {

namespace {

// NumPy's _lerp: a + (b - a) t from the nearer end, the product rounded on its own before the
// sum, as NumPy and the reference road (_statistics/_median.lerp) round it, so the quantiles
// are bit for bit the reference's (the build compiles with -ffp-contract=off: no fused
// multiply-add may merge them)
template <typename T>
inline T lerp(T a, T b, T t) {
  const T d = b - a;
  return t >= T(0.5) ? b - d * (T(1) - t) : a + d * t;
}

// the ranks read for `n` ranked values: (lo, hi, t) as _subsets.quantile (h in T)
template <typename T>
struct Rank {
  int64_t lo, hi;
  T t;
};

template <typename T>
inline Rank<T> ranks(const Out& o, int64_t n) {
  if (o.stat == kMedian) return {std::max<int64_t>(n - 1, 0) / 2, n / 2, T(0)};
  const T h = static_cast<T>(std::max<int64_t>(n - 1, 0)) * static_cast<T>(o.q);
  const T lo = std::floor(h);
  const int64_t lo_i = std::min(static_cast<int64_t>(lo), std::max<int64_t>(n - 1, 0));
  return {lo_i, std::min(lo_i + 1, std::max<int64_t>(n - 1, 0)), h - lo};
}

template <typename T>
inline T value(const Out& o, T a, T b, T t) {
  return o.stat == kMedian ? (a + b) / T(2) : lerp(a, b, t);
}

// The double heap over the points of a sliding range: a max-heap of the lower part, a
// min-heap of the upper one, each a 4-ary heap of (value, slot) entries (values inline: no
// indirection per comparison). Points live in ring slots (index & mask); a slot knows its
// heap (0 lower, 1 upper, -1 none) and position.
template <typename T>
class DoubleHeap {
 public:
  explicit DoubleHeap(int64_t capacity) {
    int64_t cap = 1;
    while (cap < capacity) cap <<= 1;
    mask_ = cap - 1;
    heap_of_.assign(static_cast<size_t>(cap), -1);
    pos_.assign(static_cast<size_t>(cap), 0);
    h_[0].reserve(static_cast<size_t>(cap));
    h_[1].reserve(static_cast<size_t>(cap));
  }

  int64_t size() const { return static_cast<int64_t>(h_[0].size() + h_[1].size()); }
  int64_t lower_size() const { return static_cast<int64_t>(h_[0].size()); }
  T lower_top() const { return h_[0][0].v; }
  T upper_top() const { return h_[1][0].v; }

  void insert(int64_t index, T v) {
    const int which = (!h_[0].empty() && v <= lower_top()) ? 0 : 1;
    push(which, {v, index & mask_});
  }

  void erase(int64_t index) {
    const int64_t slot = index & mask_;
    const int which = heap_of_[slot];
    if (which < 0) return;  // a NaN reading, never ranked
    auto& h = h_[which];
    const int64_t at = pos_[slot];
    const Entry last = h.back();
    h.pop_back();
    heap_of_[slot] = -1;
    if (last.slot != slot) {
      place(which, at, last);
      fix(which, at);
    }
  }

  // the point `old` (held, ranked) leaves and `index` (value v, not NaN) takes its place in
  // its heap: one sift, then the two tops exchanged where they cross (bottleneck's
  // move_median update); the heaps' sizes stay
  void replace(int64_t old, int64_t index, T v) {
    const int64_t so = old & mask_;
    const int which = heap_of_[so];
    const int64_t at = pos_[so];
    heap_of_[so] = -1;
    place(which, at, {v, index & mask_});
    fix(which, at);
    if (!h_[0].empty() && !h_[1].empty() && lower_top() > upper_top()) {
      const Entry a = h_[0][0], b = h_[1][0];
      place(0, 0, b);
      place(1, 0, a);
      sift_down(0, 0);
      sift_down(1, 0);
    }
  }

  // whether the point `index` is held in a heap
  bool held(int64_t index) const { return heap_of_[index & mask_] >= 0; }

  // the lower heap holds exactly `want` points (the ranks 0 .. want - 1)
  void balance(int64_t want) {
    while (lower_size() > want) move_top(0, 1);
    while (lower_size() < want && !h_[1].empty()) move_top(1, 0);
  }

  void clear() {
    for (int w = 0; w < 2; ++w) {
      for (const Entry& e : h_[w]) heap_of_[e.slot] = -1;
      h_[w].clear();
    }
  }

 private:
  static constexpr int64_t kArity = 4;
  struct Entry {
    T v;
    int64_t slot;
  };
  // heap 0 is a max-heap, heap 1 a min-heap: "above" means closer to the top
  static bool above(int which, T a, T b) { return which == 0 ? a > b : a < b; }
  void place(int which, int64_t at, Entry e) {
    h_[which][at] = e;
    pos_[e.slot] = at;
    heap_of_[e.slot] = static_cast<int8_t>(which);
  }
  void push(int which, Entry e) {
    h_[which].push_back(e);
    sift_up(which, static_cast<int64_t>(h_[which].size()) - 1);
  }
  Entry pop(int which) {
    auto& h = h_[which];
    const Entry top = h[0];
    const Entry last = h.back();
    h.pop_back();
    heap_of_[top.slot] = -1;
    if (!h.empty()) {
      place(which, 0, last);
      sift_down(which, 0);
    }
    return top;
  }
  void move_top(int from, int to) { push(to, pop(from)); }
  // the entry at `at` changed: up or down
  void fix(int which, int64_t at) {
    if (at > 0 && above(which, h_[which][at].v, h_[which][(at - 1) / kArity].v)) {
      sift_up(which, at);
    } else {
      sift_down(which, at);
    }
  }
  void sift_up(int which, int64_t at) {
    auto& h = h_[which];
    const Entry e = h[at];
    while (at > 0) {
      const int64_t parent = (at - 1) / kArity;
      if (!above(which, e.v, h[parent].v)) break;
      place(which, at, h[parent]);
      at = parent;
    }
    place(which, at, e);
  }
  void sift_down(int which, int64_t at) {
    auto& h = h_[which];
    const int64_t n = static_cast<int64_t>(h.size());
    const Entry e = h[at];
    for (;;) {
      const int64_t first = kArity * at + 1;
      if (first >= n) break;
      int64_t best = first;
      const int64_t last = std::min(first + kArity, n);
      for (int64_t c = first + 1; c < last; ++c) {
        if (above(which, h[c].v, h[best].v)) best = c;
      }
      if (!above(which, h[best].v, e.v)) break;
      place(which, at, h[best]);
      at = best;
    }
    place(which, at, e);
  }

  int64_t mask_;
  std::vector<int8_t> heap_of_;
  std::vector<int64_t> pos_;
  std::vector<Entry> h_[2];
};

template <typename T>
void heap_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const Out& o, bool omit) {
  const T* yc = y + ch;
  const int64_t cap = std::max<int64_t>(r.longest(), 1);
  DoubleHeap<T> heap(cap);
  int64_t lo = 0, hi = 0, nan = 0;  // the points [lo, hi) are held (NaN ones only counted)
  for (int64_t k = 0; k < r.K; ++k) {
    const int64_t s = r.st(k), e = s + r.ct(k);
    if (e == s) {  // left out (see Ranges::monotone)
      o.put<T>(k, C, ch, nan_v<T>());
      continue;
    }
    if (s >= hi) {  // nothing held stays: start afresh at s
      heap.clear();
      lo = hi = s;
      nan = 0;
    }
    // a point leaving and one entering, both ranked: one update in place (fixed windows)
    for (; lo < s && hi < e && hi - lo <= cap && heap.held(lo) && !std::isnan(yc[hi * C]);
         ++lo, ++hi) {
      heap.replace(lo, hi, yc[hi * C]);
    }
    for (; lo < s; ++lo) {
      if (std::isnan(yc[lo * C])) --nan; else heap.erase(lo);
    }
    for (; hi < e; ++hi) {
      const T v = yc[hi * C];
      if (std::isnan(v)) ++nan; else heap.insert(hi, v);
    }
    const int64_t n = heap.size();
    T res = nan_v<T>();
    if (n > 0 && (omit || nan == 0)) {
      const Rank<T> rk = ranks<T>(o, n);
      heap.balance(rk.lo + 1);
      const T a = heap.lower_top();
      const T b = rk.hi > rk.lo ? heap.upper_top() : a;
      res = value<T>(o, a, b, rk.t);
    }
    o.put<T>(k, C, ch, res);
  }
}

// Where sorted blocks beat the heap: below kBlocksMin points a window, sorting a block and
// relinking cost more than a few sifts of a shallow heap; above kBlocksMax, a block's lists
// outgrow the caches and every relink misses (BENCHMARKS.md, session 18)
constexpr int64_t kBlocksMin = 64, kBlocksMax = 262144;

// Fixed-count windows (Ranges::sliding): sorted blocks of w points (order_blocks.h). Every
// window holds at most w points and is short only where cut at 0 or at `len`, so it is the
// tail of one block and the head of the next; a block is sorted once, then every point
// leaves and enters its list in O(1).
// Rows [k0, k1) alone: the first window builds its blocks from its own start, so a piece from
// a row whose window starts at a multiple of w has the blocks of the loop from row 0 (and any
// row would give the same bits: the values read are exact order statistics of a total order).
template <typename T>
void block_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const Out& o, bool omit,
                int64_t k0, int64_t k1) {
  const T* yc = y + ch;
  const int64_t len = r.len, L = std::max<int64_t>(r.win, 1);
  BlockPair<T> w;
  // A holds the present points [a_lo, a_end) of its block, B [b_base, b_hi) of [b_base, b_end)
  int64_t a_lo = 0, a_end = 0, a_base = 0, b_base = -1, b_hi = 0, b_end = 0, nan = 0;
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t s = r.st(k), e = s + r.ct(k);
    if (e == s) {  // past `len`
      o.put<T>(k, C, ch, nan_v<T>());
      continue;
    }
    if (b_base < 0) {  // the first window: A empty, B the block starting with it
      a_base = a_lo = a_end = b_base = b_hi = s;
      b_end = b_base + std::min(L, len - b_base);
      w.a.build(yc, C, a_base, 0);
      w.b.build(yc, C, b_base, b_end - b_base);
    }
    // the window starts past B's first point: A is left behind (and B whole: e >= b_end)
    while (s > b_base) {
      for (; b_hi < b_end; ++b_hi) nan += w.b.restore(b_hi - b_base);
      for (; a_lo < a_end; ++a_lo) nan -= w.a.erase(a_lo - a_base);
      std::swap(w.a, w.b);
      a_base = a_lo = b_base;
      a_end = b_end;
      b_base = b_hi = b_end;
      b_end = b_base + std::min(L, len - b_base);
      w.b.build(yc, C, b_base, b_end - b_base);
    }
    for (; a_lo < s; ++a_lo) nan -= w.a.erase(a_lo - a_base);
    for (; b_hi < e; ++b_hi) nan += w.b.restore(b_hi - b_base);
    const int64_t n = w.present();
    T res = nan_v<T>();
    if (n > 0 && (omit || nan == 0)) {
      const Rank<T> rk = ranks<T>(o, n);
      const auto ab = w.at(rk.lo, rk.hi > rk.lo);
      res = value<T>(o, ab.first, ab.second, rk.t);
    }
    o.put<T>(k, C, ch, res);
  }
}

template <typename T>
void select_road(const T* y, int64_t C, int64_t ch, const Ranges& r, const Out& o, bool omit) {
  const T* yc = y + ch;
  std::vector<T> buf;
  for (int64_t k = 0; k < r.K; ++k) {
    const int64_t s = r.st(k), e = s + r.ct(k);
    const bool has_nan = copy_held(yc, C, s, e, buf) > 0;
    const int64_t n = static_cast<int64_t>(buf.size());
    T res = nan_v<T>();
    if (n > 0 && (omit || !has_nan)) {
      const Rank<T> rk = ranks<T>(o, n);
      const T a = select_kth(buf.data(), n, rk.lo);
      const T b = rk.hi > rk.lo ? *std::min_element(buf.begin() + rk.lo + 1, buf.end()) : a;
      res = value<T>(o, a, b, rk.t);
    }
    o.put<T>(k, C, ch, res);
  }
}

}  // namespace

template <typename T>
void order_ranges(const T* y, int64_t C, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                  bool omit) {
  // the heaps where ranges overlap (windows), sorted blocks for fixed-count windows of
  // kBlocksMin .. kBlocksMax points, a selection per range where they hardly overlap
  const bool heaps = r.overlapping();
  const bool blocks = r.sliding && r.win >= kBlocksMin && r.win <= kBlocksMax;
  for (const Out& o : outs) {
    if (!is_order(o.stat)) continue;
    if (heaps && blocks) {
      block_road<T>(y, C, ch, r, o, omit, 0, r.K);
    } else if (heaps) {
      heap_road<T>(y, C, ch, r, o, omit);
    } else {
      select_road<T>(y, C, ch, r, o, omit);
    }
  }
}

bool sliding_order_splits(const Ranges& r) {
  // windows of w >= 64 points over len >= 8 w rows: at least 7/8 len full windows, so more
  // than 4 points per point of the span (overlapping()), both ends non-decreasing: the
  // blocks order_ranges takes, known without a scan
  return r.sliding && r.win >= kBlocksMin && r.win <= kBlocksMax && r.len / 8 >= r.win;
}

template <typename T>
void sliding_order_rows(const T* y, int64_t C, int64_t ch, const Ranges& r,
                        const std::vector<Out>& outs, bool omit, int64_t k0, int64_t k1) {
  for (const Out& o : outs) {
    if (is_order(o.stat)) block_road<T>(y, C, ch, r, o, omit, k0, k1);
  }
}

template void sliding_order_rows<float>(const float*, int64_t, int64_t, const Ranges&,
                                        const std::vector<Out>&, bool, int64_t, int64_t);
template void sliding_order_rows<double>(const double*, int64_t, int64_t, const Ranges&,
                                         const std::vector<Out>&, bool, int64_t, int64_t);
template void order_ranges<float>(const float*, int64_t, int64_t, const Ranges&,
                                  const std::vector<Out>&, bool);
template void order_ranges<double>(const double*, int64_t, int64_t, const Ranges&,
                                   const std::vector<Out>&, bool);

}  // namespace jaxsubset
