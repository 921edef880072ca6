// The FFI handlers of the windows over rows (module.cc registers them):
// jaxsubset_sliding_stats (fixed-count windows) and jaxsubset_xwidth_stats (x-width windows).
//
// Threads: a call's work is cut into pieces fixed by the data and the attributes alone
// (never the thread count) and run over XLA's intra-op thread pool (parallel.h); each piece
// writes only its own rows of its own results, and a piece that starts inside a series
// rebuilds what the serial loop carried into it, so every result has the same bits for any
// number of threads (JAXSUBSET_NATIVE_THREADS=1: all on the calling thread).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

#include "kernels.h"
#include "parallel.h"

namespace jaxsubset {
namespace {

ffi::Error invalid(const std::string& what) {
  return ffi::Error::InvalidArgument("jaxsubset_range_stats: " + what);
}

// One piece of a sliding call: series j0 .. j1 - 1 (series j: batch item j / C, channel
// j % C) whole, or one part of series j0: the block statistics' windows ending in [e0, e1)
// (the tail with the last part), the order statistics of rows [e0, e1) (sorted blocks), or
// the other statistics (and the order ones where they are not cut).
struct SlidingTask {
  enum Kind { kWhole, kBlockRows, kOrderRows, kOthers };
  Kind kind;
  int64_t j0, j1, e0, e1;
};

// The statistic families a call asks for: the block loop's (min_periods finished inside),
// the order statistics, the other folded ones.
struct SlidingHas {
  bool blocks = false, order = false, folded = false;
};

Ranges sliding_ranges(int64_t N, int64_t window, int64_t lead, int64_t len) {
  Ranges r{nullptr, nullptr, false, N, N};
  r.sliding = true;
  r.win = window;
  r.lead = lead;
  r.len = len;
  return r;
}

// whether a series' order statistics are cut into row pieces: longer than a piece, on
// sorted blocks (order.cc)
bool sliding_order_cut(int64_t window, int64_t lead, int64_t len) {
  return len > sliding_piece(window) &&
         sliding_order_splits(sliding_ranges(len, window, lead, len));
}

// The pieces, from the lengths, the statistics and the window alone (never the thread
// count): a series longer than a piece (sliding_piece) is cut at its multiples (its order
// statistics too where they take sorted blocks: at the rows whose windows start there),
// shorter ones are grouped until a group holds a piece's rows (small calls: one piece, run
// on the calling thread).
std::vector<SlidingTask> sliding_tasks(const std::vector<int64_t>& lens, int64_t C, int64_t N,
                                       int64_t window, int64_t lead, const SlidingHas& has) {
  std::vector<SlidingTask> tasks;
  const int64_t P = sliding_piece(window);
  const int64_t J = static_cast<int64_t>(lens.size()) * C;
  int64_t open = -1, rows = 0;  // the series of the group being filled: [open, j)
  auto close = [&](int64_t j) {
    if (open >= 0) tasks.push_back({SlidingTask::kWhole, open, j, 0, 0});
    open = -1;
    rows = 0;
  };
  for (int64_t j = 0; j < J; ++j) {
    const int64_t len = lens[static_cast<size_t>(j / C)];
    const bool blocks = has.blocks && len > P;
    const bool order = has.order && sliding_order_cut(window, lead, len);
    if (!blocks && !order) {
      if (open < 0) open = j;
      rows += N;
      if (rows >= P) close(j + 1);
      continue;
    }
    close(j);
    for (int64_t e = 0; blocks && e < len; e += P) {
      tasks.push_back({SlidingTask::kBlockRows, j, j + 1, e, len - e > P ? e + P : len});
    }
    // rows whose windows start at a multiple of P (row k's starts at k + lead - window + 1)
    for (int64_t e = P, k0 = 0; order && k0 < N; e += P) {
      const int64_t k1 = e >= len ? N : std::clamp(e + window - 1 - lead, k0, N);
      if (k1 > k0) tasks.push_back({SlidingTask::kOrderRows, j, j + 1, k0, k1});
      k0 = k1;
    }
    if (has.folded || (has.order && !order)) {
      tasks.push_back({SlidingTask::kOthers, j, j + 1, 0, 0});
    }
  }
  close(J);
  return tasks;
}

// A sliding call's operands, read by every piece (no piece writes here).
template <typename T>
struct SlidingCall {
  const T* y;                 // y's data
  BatchMap ymap;
  std::vector<int64_t> lens;  // the present rows of each batch item
  std::vector<Out> outs;      // the results of batch item 0
  int64_t N, C, window, lead, min_periods, capacity, ddof;
  bool omit;

  // the results of batch item b, by family
  struct Item {
    std::vector<Out> blocks, folded, order;
  };
  void item(int64_t b, Item& it) const {
    it.blocks.clear();
    it.folded.clear();
    it.order.clear();
    for (Out o : outs) {
      const size_t width = o.integer ? (o.i64 ? 8 : 4) : sizeof(T);
      o.base = static_cast<char*>(o.base) + b * N * C * width;
      (is_block_stat(o.stat) ? it.blocks : is_order(o.stat) ? it.order : it.folded).push_back(o);
    }
  }
  int64_t len(int64_t b) const { return lens[static_cast<size_t>(b)]; }
  const T* series(int64_t b) const { return y + ymap.offset(b); }

  void run(const SlidingTask& t) const {
    Item it;
    const int64_t b = t.j0 / C, ch = t.j0 % C;
    switch (t.kind) {
      case SlidingTask::kBlockRows:
        item(b, it);
        sliding_folded<T>(series(b), C, ch, N, len(b), window, lead, it.blocks, omit, ddof,
                          min_periods, t.e0, t.e1, t.e1 == len(b));
        return;
      case SlidingTask::kOrderRows: {
        item(b, it);
        const Ranges r = sliding_ranges(N, window, lead, len(b));
        sliding_order_rows<T>(series(b), C, ch, r, it.order, omit, t.e0, t.e1);
        if (capacity >= 0 && window > capacity) {  // (capacity_rule: the longest has window points)
          for (int64_t k = t.e0; k < t.e1; ++k) {
            if (r.ct(k) <= capacity) continue;
            for (const Out& o : it.order) o.put<T>(k, C, ch, nan_v<T>());
          }
        }
        min_periods_rows(series(b), ch, r, it.order, t.e0, t.e1);
        return;
      }
      case SlidingTask::kOthers:
        item(b, it);
        if (sliding_order_cut(window, lead, len(b))) it.order.clear();  // (their own pieces)
        others(b, ch, it);
        return;
      case SlidingTask::kWhole:
        for (int64_t j = t.j0, cur = -1; j < t.j1; ++j) {
          const int64_t bj = j / C, cj = j % C;
          if (bj != cur) item(bj, it);
          cur = bj;
          if (!it.blocks.empty()) {
            sliding_folded<T>(series(bj), C, cj, N, len(bj), window, lead, it.blocks, omit,
                              ddof, min_periods, 0, len(bj), true);
          }
          others(bj, cj, it);
        }
        return;
    }
  }

  // the folded statistics outside the block loop and the order ones of series (b, ch), every
  // row, then min_periods
  void others(int64_t b, int64_t ch, const Item& it) const {
    if (it.folded.empty() && it.order.empty()) return;
    Ranges r = sliding_ranges(N, window, lead, len(b));
    r.scan();  // (a pass over every row: only for the statistics that read its summary)
    const T* yb = series(b);
    if (!it.folded.empty()) folded_ranges<T>(yb, C, ch, r, it.folded, omit, ddof);
    if (!it.order.empty()) {
      order_ranges<T>(yb, C, ch, r, it.order, omit);
      capacity_rule<T>(r, C, ch, it.order, capacity);
    }
    min_periods_rows(yb, ch, r, it.folded, 0, N);
    min_periods_rows(yb, ch, r, it.order, 0, N);
  }

  // NaN in `outs` at the rows of [k0, k1) where `below(k)`: a prefix and a suffix of them
  // (below is true on a prefix and a suffix of the rows)
  template <typename F>
  void finish_rows(const std::vector<Out>& outs, int64_t k0, int64_t k1, const F& below,
                   int64_t ch) const {
    const T nan = nan_v<T>();
    auto put_nan = [&](int64_t k) {
      for (const Out& o : outs) o.put<T>(k, C, ch, nan);
    };
    int64_t k = k0;
    for (; k < k1 && below(k); ++k) put_nan(k);
    for (int64_t j = k1 - 1; j >= k && below(j); --j) put_nan(j);
  }

  // min_periods over rows [k0, k1): NaN where a window counts fewer points (NaN left out
  // with omit), kept by two pointers from the window of row k0 (exact counts: any k0 gives
  // the rows the counts of a pass from row 0)
  void min_periods_rows(const T* yb, int64_t ch, const Ranges& r, const std::vector<Out>& outs,
                        int64_t k0, int64_t k1) const {
    if (min_periods < 0 || outs.empty() || k0 >= k1) return;
    if (!omit) {
      // every row counted: a window's rows (k + lead + 1 cut to len, minus its start) are
      // concave in k, so the windows under min_periods are a prefix and a suffix
      finish_rows(outs, k0, k1, [&](int64_t k) { return r.ct(k) < min_periods; }, ch);
      return;
    }
    const T nan = nan_v<T>();
    int64_t lo = r.st(k0), hi = lo, nans = 0;
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t s = r.st(k), e = s + r.ct(k);
      for (; hi < e; ++hi) nans += std::isnan(static_cast<double>(yb[hi * C + ch]));
      for (; lo < s; ++lo) nans -= std::isnan(static_cast<double>(yb[lo * C + ch]));
      if (e - s - nans < min_periods) {
        for (const Out& o : outs) o.put<T>(k, C, ch, nan);
      }
    }
  }
};

// jaxsubset_sliding_stats(y, length) -> one result per statistic, (*B, N, C): fixed-count
// windows with no range arrays: row k's window is [k + lead - window + 1, k + lead] cut to the
// first length[b] rows. min_periods >= 0: every result (count too) in y's float dtype, NaN
// where the window has fewer than min_periods points counted as "count" counts them (rows,
// NaN included, for "count" itself: pandas), written once.
template <typename T>
ffi::Error run_sliding(ffi::ThreadPool* pool, ffi::AnyBuffer y, ffi::AnyBuffer length,
                       ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
                       ffi::Span<const double> qs, bool omit, int64_t ddof, int64_t window,
                       int64_t lead, int64_t min_periods, int64_t capacity) {
  auto ydims = y.dimensions();
  if (ydims.size() < 2) return invalid("y must be (*batch, N, C)");
  const size_t nb = ydims.size() - 2;
  const int64_t N = ydims[nb], C = ydims[nb + 1];
  if (length.dimensions().size() != nb + 1) return invalid("length must be (*batch, 1)");
  const bool l64 = length.element_type() == ffi::DataType::S64;
  if (!l64 && length.element_type() != ffi::DataType::S32) return invalid("length must be int");
  if (window < 1 || lead < 0) return invalid("window must be >= 1 and lead >= 0");
  if (rets.size() != stats.size()) return invalid("one result per statistic");
  const bool finish_mp = min_periods >= 0;
  std::vector<Out> outs(stats.size());
  std::vector<int64_t> bdims(nb, 1);
  SlidingHas has;
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nb + 2 || rdims[nb] != N) return invalid("results must be (*batch, N, C)");
    for (size_t d = 0; d < nb; ++d) bdims[d] = rdims[d];
    advise_huge(**res);  // (before the first write: see common.h)
    outs[i].base = (*res)->untyped_data();
    outs[i].stat = stats[i];
    outs[i].q = i < qs.size() ? qs[i] : 0.0;
    outs[i].integer = stats[i] == kCount && !finish_mp;
    outs[i].i64 = (*res)->element_type() == ffi::DataType::S64;
    (is_block_stat(stats[i]) ? has.blocks : is_order(stats[i]) ? has.order : has.folded) = true;
  }
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nb, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto lmap = BatchMap::make(length.dimensions(), nb, bdims, 1, "length");
  if (!lmap.has_value()) return lmap.error();
  std::vector<int64_t> lens(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    const char* lp = static_cast<const char*>(length.untyped_data()) + lmap->offset(b) * (l64 ? 8 : 4);
    int64_t len = l64 ? *reinterpret_cast<const int64_t*>(lp) : *reinterpret_cast<const int32_t*>(lp);
    lens[static_cast<size_t>(b)] = len < 0 ? 0 : (len > N ? N : len);
  }
  const std::vector<SlidingTask> tasks = sliding_tasks(lens, C, N, window, lead, has);
  const SlidingCall<T> call{static_cast<const T*>(y.untyped_data()), *ymap, std::move(lens),
                            std::move(outs), N, C, window, lead, min_periods, capacity, ddof, omit};
  for_pieces(pool, static_cast<int64_t>(tasks.size()),
             [&call, &tasks](int64_t p) { call.run(tasks[static_cast<size_t>(p)]); });
  return ffi::Error::Success();
}

ffi::Error SlidingStatsImpl(ffi::ThreadPool pool, ffi::AnyBuffer y, ffi::AnyBuffer length,
                            ffi::RemainingRets rets,
                            ffi::Span<const int64_t> stats, ffi::Span<const double> qs,
                            int64_t omit, int64_t ddof, int64_t window, int64_t lead,
                            int64_t min_periods, int64_t capacity) {
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return run_sliding<float>(&pool, y, length, rets, stats, qs, omit != 0, ddof, window,
                                lead, min_periods, capacity);
    case ffi::DataType::F64:
      return run_sliding<double>(&pool, y, length, rets, stats, qs, omit != 0, ddof, window,
                                 lead, min_periods, capacity);
    default:
      return invalid("y must be float32 or float64");
  }
}


// The fixed-count width of evenly spaced x (xwidth_fixed_start), 0 where the windows are not
// all trailing windows of one count. The check of the later rows is cut into pieces of
// kFixedPiece rows (from the length alone) over the pool: a boolean per piece, and-ed, so the
// answer is the same for any number of threads; it reads all of x, which one thread alone
// spent as long on as the windows' statistics.
constexpr int64_t kFixedPiece = int64_t{1} << 18;
int64_t fixed_width(ffi::ThreadPool* pool, const XWidth& a) {
  int64_t from = 0;
  const int64_t w = xwidth_fixed_start(a, from);
  if (w <= 0 || from >= a.len) return w;
  const int64_t pieces = (a.len - from + kFixedPiece - 1) / kFixedPiece;
  std::vector<char> ok(static_cast<size_t>(pieces), 0);
  char* slots = ok.data();
  for_pieces(pool, pieces, [&a, w, from, slots, len = a.len](int64_t p) {
    const int64_t i0 = from + p * kFixedPiece;
    slots[p] = xwidth_fixed_rows(a, w, i0, std::min(len, i0 + kFixedPiece)) ? 1 : 0;
  });
  for (const char c : ok) {
    if (c == 0) return 0;
  }
  return w;
}

// jaxsubset_xwidth_stats(x, y, width, length) -> one result per statistic, (*B, N, C) in y's
// float dtype: one trailing x-width window per row of sorted x (xwidth.cc resolves them by
// two pointers: no bound arrays from XLA), the statistics over them, min_periods finished
// (as _sliding.finish: "count" compares it with the window's rows, the others with the
// counted points). x (*B, N) float32/float64/int32/int64; width (*B, k): float x: the
// width in the promoted float dtype (k = 1); integer x: (wrap, t, big) in x's dtype (k = 3);
// twice that (k = 2, 6: the lower operand, then the upper one) for windows that end by
// value at x[i] + upper (centred windows) instead of at their own row;
// length (*B, 1): the present rows (later rows: empty windows).
template <typename T>
ffi::Error run_xwidth(ffi::ThreadPool* pool, ffi::AnyBuffer x, ffi::AnyBuffer y, ffi::AnyBuffer width,
                      ffi::AnyBuffer length, ffi::RemainingRets rets,
                      ffi::Span<const int64_t> stats, ffi::Span<const double> qs, bool omit,
                      int64_t ddof, bool lo_right, bool hi_right, int64_t min_periods,
                      int64_t capacity) {
  auto ydims = y.dimensions();
  if (ydims.size() < 2) return invalid("y must be (*batch, N, C)");
  const size_t nb = ydims.size() - 2;
  const int64_t N = ydims[nb], C = ydims[nb + 1];
  auto xdims = x.dimensions();
  if (xdims.size() != nb + 1 || xdims[nb] != N) return invalid("x must be (*batch, N)");
  auto wdims = width.dimensions();
  if (wdims.size() != nb + 1) return invalid("width must be (*batch, k)");
  const int64_t kw = wdims[nb];
  if (length.dimensions().size() != nb + 1) return invalid("length must be (*batch, 1)");
  const bool l64 = length.element_type() == ffi::DataType::S64;
  if (!l64 && length.element_type() != ffi::DataType::S32) return invalid("length must be int");
  if (rets.size() != stats.size()) return invalid("one result per statistic");
  if (min_periods < 0) return invalid("min_periods must be >= 0");
  const auto xt = x.element_type(), wt = width.element_type();
  const bool xfloat = xt == ffi::DataType::F32 || xt == ffi::DataType::F64;
  const bool xint = xt == ffi::DataType::S32 || xt == ffi::DataType::S64;
  if (!xfloat && !xint) return invalid("x must be float32/float64/int32/int64");
  if (xfloat && ((wt != ffi::DataType::F32 && wt != ffi::DataType::F64) || (kw != 1 && kw != 2) ||
                 (xt == ffi::DataType::F64 && wt != ffi::DataType::F64))) {
    return invalid("the width of float x must be one value of their promoted float dtype (two: "
                   "lower and upper)");
  }
  if (xint && (wt != xt || (kw != 3 && kw != 6))) {
    return invalid("the width of integer x must be (wrap, t, big) (twice: lower and upper)");
  }
  std::vector<Out> outs(stats.size());
  std::vector<int64_t> bdims(nb, 1);
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nb + 2 || rdims[nb] != N) return invalid("results must be (*batch, N, C)");
    for (size_t d = 0; d < nb; ++d) bdims[d] = rdims[d];
    advise_huge(**res);  // (before the first write: see common.h)
    outs[i].base = (*res)->untyped_data();
    outs[i].stat = stats[i];
    outs[i].q = i < qs.size() ? qs[i] : 0.0;
  }
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nb, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto xmap = BatchMap::make(xdims, nb, bdims, N, "x");
  if (!xmap.has_value()) return xmap.error();
  auto wmap = BatchMap::make(wdims, nb, bdims, kw, "width");
  if (!wmap.has_value()) return wmap.error();
  auto lmap = BatchMap::make(length.dimensions(), nb, bdims, 1, "length");
  if (!lmap.has_value()) return lmap.error();
  const size_t xw = (xt == ffi::DataType::F64 || xt == ffi::DataType::S64) ? 8 : 4;
  const size_t ww = (wt == ffi::DataType::F64 || wt == ffi::DataType::S64) ? 8 : 4;
  const int xtype = xt == ffi::DataType::F32   ? XWidth::kF32
                    : xt == ffi::DataType::F64 ? XWidth::kF64
                    : xt == ffi::DataType::S32 ? XWidth::kI32
                                               : XWidth::kI64;
  const T* ybase = static_cast<const T*>(y.untyped_data());
  std::vector<Out> item, queued, folded, order;
  std::vector<int64_t> st, ct;  // the other statistics' ranges
  for (int64_t b = 0; b < B; ++b) {
    const char* lp = static_cast<const char*>(length.untyped_data()) + lmap->offset(b) * (l64 ? 8 : 4);
    int64_t len = l64 ? *reinterpret_cast<const int64_t*>(lp) : *reinterpret_cast<const int32_t*>(lp);
    len = len < 0 ? 0 : (len > N ? N : len);
    const char* wb = static_cast<const char*>(width.untyped_data()) + wmap->offset(b) * ww;
    XWidth a{static_cast<const char*>(x.untyped_data()) + xmap->offset(b) * xw, xtype, wb,
             wt == ffi::DataType::F64, N, len, lo_right, hi_right};
    if (kw == 2 || kw == 6) a.u = wb + (kw / 2) * ww;  // windows that end by value
    item.assign(outs.begin(), outs.end());
    queued.clear();
    folded.clear();
    order.clear();
    for (size_t i = 0; i < outs.size(); ++i) {
      item[i].base = static_cast<char*>(outs[i].base) + b * N * C * sizeof(T);
      if (is_queue_stat(item[i].stat)) {
        queued.push_back(item[i]);
      } else {
        (is_order(item[i].stat) ? order : folded).push_back(item[i]);
      }
    }
    const T* yb = ybase + ymap->offset(b);
    // windows of a fixed number of rows (evenly spaced x): sliding.cc's block loop, whose
    // blocks beat the queue; the choice is made from x alone, so a value of y outside a
    // window still never changes it
    const int64_t fixed = len != N ? 0 : fixed_width(pool, a);
    // pieces (from the data alone): each channel of a long series apart, and the block loop's
    // row pieces (sliding_piece) of each; a short series is one piece. The queue runs whole
    // channels (its segments start from the first row)
    const bool wide = N >= sliding_piece(1);
    const int64_t P = fixed > 0 ? sliding_piece(fixed) : N;
    const int64_t per = fixed > 0 && len > P ? (len + P - 1) / P : 1;
    if (!queued.empty()) {
      for_pieces(pool, wide ? C * per : 1, [&](int64_t p) {
        for (int64_t ch = wide ? p / per : 0; ch < (wide ? p / per + 1 : C); ++ch) {
          if (fixed == 0) {
            xwidth_folded<T>(a, yb, C, ch, queued, omit, ddof, min_periods);
            continue;
          }
          const int64_t e0 = wide ? p % per * P : 0, e1 = wide ? std::min(len, e0 + P) : len;
          sliding_folded<T>(yb, C, ch, N, len, fixed, 0, queued, omit, ddof, min_periods, e0,
                            e1, e1 == len);
        }
      });
    }
    if (folded.empty() && order.empty()) continue;
    // the others over the windows' ranges (ranges.cc, order.cc), then min_periods: the
    // fixed-count windows' own (as jaxsubset_sliding_stats: no bound arrays), else the
    // resolved bounds
    Ranges r{nullptr, nullptr, true, N, len};
    if (fixed > 0) {
      r.sliding = true;
      r.win = fixed;
      r.lead = 0;
      r.len = len;
    } else {
      st.resize(static_cast<size_t>(N));
      ct.resize(static_cast<size_t>(N));
      xwidth_bounds<int64_t>(a, st.data(), ct.data());
      r.start = st.data();
      r.count = ct.data();
    }
    r.scan();
    if (!r.valid) return invalid("x-width windows outside the data (x unsorted?)");
    const T nan = nan_v<T>();
    // (each channel a piece where the series is long: r is read, never written)
    auto channel = [&](int64_t ch) {
      if (!folded.empty()) folded_ranges<T>(yb, C, ch, r, folded, omit, ddof);
      if (!order.empty()) {
        order_ranges<T>(yb, C, ch, r, order, omit);
        capacity_rule<T>(r, C, ch, order, capacity);
      }
      // the counted points of each window (NaN left out with omit) by two pointers (exact)
      bool any_nan = false;
      if (omit) {
        for (int64_t i = 0; i < len && !any_nan; ++i) any_nan = std::isnan(yb[i * C + ch]);
      }
      int64_t lo = 0, hi = 0, nans = 0;
      for (int64_t k = 0; k < N; ++k) {
        const int64_t s = r.st(k), e = s + r.ct(k);
        if (any_nan) {
          for (; hi < e; ++hi) nans += std::isnan(yb[hi * C + ch]);
          for (; lo < s; ++lo) nans -= std::isnan(yb[lo * C + ch]);
        }
        if (e - s - nans < min_periods) {
          for (const Out& o : folded) o.put<T>(k, C, ch, nan);
          for (const Out& o : order) o.put<T>(k, C, ch, nan);
        }
      }
    };
    for_pieces(pool, wide ? C : 1, [&](int64_t p) {
      for (int64_t ch = wide ? p : 0; ch < (wide ? p + 1 : C); ++ch) channel(ch);
    });
  }
  return ffi::Error::Success();
}

ffi::Error XwidthStatsImpl(ffi::ThreadPool pool, ffi::AnyBuffer x, ffi::AnyBuffer y, ffi::AnyBuffer width,
                           ffi::AnyBuffer length, ffi::RemainingRets rets,
                           ffi::Span<const int64_t> stats, ffi::Span<const double> qs,
                           int64_t omit, int64_t ddof, int64_t lo_right, int64_t hi_right,
                           int64_t min_periods, int64_t capacity) {
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return run_xwidth<float>(&pool, x, y, width, length, rets, stats, qs, omit != 0, ddof,
                               lo_right != 0, hi_right != 0, min_periods, capacity);
    case ffi::DataType::F64:
      return run_xwidth<double>(&pool, x, y, width, length, rets, stats, qs, omit != 0, ddof,
                                lo_right != 0, hi_right != 0, min_periods, capacity);
    default:
      return invalid("y must be float32 or float64");
  }
}

}  // namespace
}  // namespace jaxsubset

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetSlidingStats, jaxsubset::SlidingStatsImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Arg<xla::ffi::AnyBuffer>()  // y
                                  .Arg<xla::ffi::AnyBuffer>()  // length
                                  .RemainingRets()
                                  .Attr<xla::ffi::Span<const int64_t>>("stats")
                                  .Attr<xla::ffi::Span<const double>>("qs")
                                  .Attr<int64_t>("omit")
                                  .Attr<int64_t>("ddof")
                                  .Attr<int64_t>("window")
                                  .Attr<int64_t>("lead")
                                  .Attr<int64_t>("min_periods")
                                  .Attr<int64_t>("capacity"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetXwidthStats, jaxsubset::XwidthStatsImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // y
                                  .Arg<xla::ffi::AnyBuffer>()  // width
                                  .Arg<xla::ffi::AnyBuffer>()  // length
                                  .RemainingRets()
                                  .Attr<xla::ffi::Span<const int64_t>>("stats")
                                  .Attr<xla::ffi::Span<const double>>("qs")
                                  .Attr<int64_t>("omit")
                                  .Attr<int64_t>("ddof")
                                  .Attr<int64_t>("lo_right")
                                  .Attr<int64_t>("hi_right")
                                  .Attr<int64_t>("min_periods")
                                  .Attr<int64_t>("capacity"));
