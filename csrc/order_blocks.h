// Sorted blocks for the order statistics of fixed-count windows (J. Suomela, "Median filtering
// is equivalent to sorting", 2014): the points are cut into blocks of w (the window's count),
// each block's non-NaN values sorted once; a window of at most w points is the tail of one
// block (A) and the head of the next (B). Each block keeps its present points as a doubly
// linked list in sorted order: a point leaving A is unlinked, one entering B is linked back
// ("un-deleted": B's list is built whole, then unlinked in reverse index order, so the links
// restored in index order are exact). A pointer into each list splits the window into its
// `small` points (those before the pointers) and the rest; a rank query moves the pointers
// until exactly k points are small and every small point precedes every other one, then
// reads the k-th point (and the next) at the pointers. Every value read is one of the
// window's own: the results are exact order statistics.
//
// The order is total: by value (-0.0 equal to 0.0), then by index (a block's ties sorted in
// index order, A's points before B's): a stable sort's, as the reference road sorts a window,
// so the point read is the reference's own, the sign of a zero included.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace jaxsubset {

template <typename T>
class SortedBlock {
 public:
  // the points y[base .. base + len) (stride C), sorted, none present: ready to be linked
  // back in index order
  void build(const T* y, int64_t C, int64_t base, int64_t len) {
    keys_.clear();
    for (int64_t i = 0; i < len; ++i) {
      const T v = y[(base + i) * C];
      if (!std::isnan(v)) keys_.push_back({sort_key(v), static_cast<uint32_t>(i)});
    }
    sort_keys();
    m_ = static_cast<int32_t>(keys_.size());
    k_.resize(static_cast<size_t>(m_) + 2);
    v_.resize(static_cast<size_t>(m_) + 2);
    nx_.resize(static_cast<size_t>(m_) + 2);
    pv_.resize(static_cast<size_t>(m_) + 2);
    pos_.assign(static_cast<size_t>(len), 0);
    for (int32_t r = 0; r < m_; ++r) {
      k_[r + 1] = keys_[r].k;
      v_[r + 1] = y[(base + keys_[r].i) * C];
      pos_[keys_[r].i] = r + 1;
    }
    // the sentinels: below and above every value's key (NaN, never ranked, has no key)
    k_[0] = 0;
    k_[m_ + 1] = ~Key{0};
    // positions 1..m in sorted order; 0 the head, m + 1 the tail
    for (int32_t q = 0; q <= m_; ++q) {
      nx_[q] = q + 1;
      pv_[q + 1] = q;
    }
    nx_[m_ + 1] = m_ + 1;
    pv_[0] = 0;
    for (int64_t i = len; i-- > 0;) {  // every point unlinked, the last first
      const int32_t q = pos_[i];
      if (q) unlink(q);
    }
    present_ = 0;
    p_ = nx_[0];
    small_ = 0;
  }

  // the point base + i leaves (it is present, or NaN: returns whether it was NaN)
  bool erase(int64_t i) {
    const int32_t q = pos_[i];
    if (!q) return true;
    small_ -= q < p_;
    p_ = q == p_ ? nx_[q] : p_;
    unlink(q);
    --present_;
    return false;
  }
  // the point base + i enters (every point before it in the block entered, none after)
  bool restore(int64_t i) {
    const int32_t q = pos_[i];
    if (!q) return true;
    nx_[pv_[q]] = q;
    pv_[nx_[q]] = q;
    ++present_;
    small_ += q < p_;
    return false;
  }

  int32_t present() const { return present_; }
  int32_t small() const { return small_; }
  // the keys of the pointer's point (the first not small; none: the tail's, above all), of the
  // last small one (none: the head's, below all) and of the point after the pointer's
  using Key = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  Key peek() const { return k_[p_]; }
  Key last_small() const { return k_[pv_[p_]]; }
  Key peek_next() const { return k_[nx_[p_]]; }
  // the values there (-0.0 kept)
  T peek_value() const { return v_[p_]; }
  T next_value() const { return v_[nx_[p_]]; }
  void advance() {
    p_ = nx_[p_];
    ++small_;
  }
  void retreat() {
    p_ = pv_[p_];
    --small_;
  }

 private:
  // an unsigned key per value, in the values' order (-0.0 the key of 0.0: equal values tie),
  // strictly between 0 and ~0 for every non-NaN value (the sentinels')
  static Key sort_key(T v) {
    if (v == T(0)) v = T(0);
    Key u;
    std::memcpy(&u, &v, sizeof u);
    constexpr Key top = Key{1} << (8 * sizeof(Key) - 1);
    return (u & top) ? ~u : (u | top);
  }
  struct Item {
    Key k;
    uint32_t i;
  };
  // by radix, least significant digit first: the keys' 24 highest bits that differ within
  // the block (three 8-bit digits, one histogram pass), then each run of keys equal in those
  // bits (rare unless values repeat) sorted by comparisons; short blocks by comparisons alone
  void sort_keys() {
    const size_t n = keys_.size();
    // ties in index order (the radix passes are stable: keys_ starts in index order)
    auto by_key = [](const Item& a, const Item& b) { return a.k < b.k || (a.k == b.k && a.i < b.i); };
    if (n < 64) {
      std::sort(keys_.begin(), keys_.end(), by_key);
      return;
    }
    Key diff = 0;
    for (const Item& it : keys_) diff |= it.k ^ keys_[0].k;
    if (diff == 0) return;  // every value the same
    int top = 8 * static_cast<int>(sizeof(Key)) - 1;
    while (!((diff >> top) & 1)) --top;
    const int low = std::max(top - 23, 0);  // digits: bits low .. top
    uint32_t count[3][256] = {};
    for (const Item& it : keys_) {
      for (int d = 0; d < 3; ++d) ++count[d][(it.k >> (low + 8 * d)) & 0xff];
    }
    tmp_.resize(n);
    for (int d = 0; d < 3 && low + 8 * d <= top; ++d) {
      const int shift = low + 8 * d;
      uint32_t* c = count[d];
      uint32_t sum = 0;
      for (int b = 0; b < 256; ++b) {
        const uint32_t t = c[b];
        c[b] = sum;
        sum += t;
      }
      for (const Item& it : keys_) tmp_[c[(it.k >> shift) & 0xff]++] = it;
      keys_.swap(tmp_);
    }
    if (low == 0) return;
    for (size_t a = 0; a < n;) {
      size_t b = a + 1;
      while (b < n && (keys_[b].k >> low) == (keys_[a].k >> low)) ++b;
      if (b - a > 1) std::sort(keys_.begin() + a, keys_.begin() + b, by_key);
      a = b;
    }
  }
  void unlink(int32_t q) {
    nx_[pv_[q]] = nx_[q];
    pv_[nx_[q]] = pv_[q];
  }

  int32_t m_ = 0, p_ = 1, small_ = 0, present_ = 0;
  std::vector<Key> k_;  // k_[p]: the key at position p (0 head, m + 1 tail)
  std::vector<T> v_;    // v_[p]: the value at position p
  std::vector<int32_t> nx_, pv_, pos_;
  std::vector<Item> keys_, tmp_;
};

// The window over two sorted blocks (A's tail, B's head): rank queries.
template <typename T>
struct BlockPair {
  SortedBlock<T> a, b;

  int64_t present() const { return int64_t{a.present()} + b.present(); }

  // exactly k points small, each before every other point (the total order: key, then A
  // before B; the sentinels' keys end the lists); every step moves one pointer by one point,
  // O(1) a slide amortised
  void settle(int64_t k) {
    while (a.small() + b.small() < k) {  // the first point not small joins the small ones
      if (b.peek() < a.peek()) {
        b.advance();
      } else {
        a.advance();
      }
    }
    while (a.small() + b.small() > k) {  // the last small point leaves them
      if (a.last_small() <= b.last_small()) {
        b.retreat();
      } else {
        a.retreat();
      }
    }
    for (;;) {  // a small point after a point not small: the two trade places
      if (b.peek() < a.last_small()) {
        a.retreat();
        b.advance();
      } else if (a.peek() <= b.last_small()) {
        b.retreat();
        a.advance();
      } else {
        break;
      }
    }
  }

  // the values of ranks k and k + 1 (hi: whether the second is read), 0 <= k < present()
  std::pair<T, T> at(int64_t k, bool hi) {
    settle(k);
    const auto ka = a.peek(), kb = b.peek();
    const bool from_a = ka <= kb;
    const T x = from_a ? a.peek_value() : b.peek_value();
    T y = x;
    if (hi) {
      if (from_a) {
        y = a.peek_next() <= kb ? a.next_value() : b.peek_value();
      } else {
        y = ka <= b.peek_next() ? a.peek_value() : b.next_value();
      }
    }
    return {x, y};
  }
};

}  // namespace jaxsubset
