// jaxsubset._native._kernels: the FFI handlers of the native CPU road, as capsules for
// jax.ffi.register_ffi_target (typed FFI, api_version 1), and what they were built against.
//
// jaxsubset_range_stats(y, start, count) -> one result per requested statistic
//   y      (*B, N, C) float32/float64 (integers and float16 are converted by the caller)
//   start  (*B, K)    int32/int64, clipped to [0, N] with start + count <= N by the caller
//   count  (*B, K)    the same dtype
//   results (*B, K, C): the input's float dtype, "count" in start's integer dtype
//   attrs  stats (int64 codes of common.h), qs (float64, q of each kQuantile, else 0),
//          omit (0/1), ddof, capacity (the order statistics of a longer range are NaN,
//          as on the pure-JAX roads; -1: none)
// Batch dimensions of size 1 in an operand are broadcast (vmap_method="expand_dims").
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "nanobind/nanobind.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

#include "kernels.h"

namespace nb = nanobind;

namespace jaxsubset {
namespace {

ffi::Error invalid(const std::string& what) {
  return ffi::Error::InvalidArgument("jaxsubset_range_stats: " + what);
}


// the pure-JAX roads' capacity rule for the order statistics (the same results on every
// road and platform): a range of more than `capacity` points gives NaN (capacity < 0: none)
template <typename T>
void capacity_rule(const Ranges& r, int64_t C, int64_t ch, const std::vector<Out>& outs,
                   int64_t capacity) {
  if (capacity < 0 || r.longest() <= capacity) return;
  for (const Out& o : outs) {
    if (!is_order(o.stat)) continue;
    for (int64_t k = 0; k < r.K; ++k) {
      if (r.ct(k) > capacity) o.put<T>(k, C, ch, nan_v<T>());
    }
  }
}

template <typename T>
ffi::Error run(ffi::AnyBuffer y, ffi::AnyBuffer start, ffi::AnyBuffer count,
               ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
               ffi::Span<const double> qs, bool omit, int64_t ddof, int64_t capacity) {
  auto ydims = y.dimensions();
  if (ydims.size() < 2) return invalid("y must be (*batch, N, C)");
  const size_t nb = ydims.size() - 2;
  const int64_t N = ydims[nb], C = ydims[nb + 1];
  auto sdims = start.dimensions();
  if (sdims.size() != nb + 1 || count.dimensions().size() != nb + 1) {
    return invalid("start and count must be (*batch, K)");
  }
  const int64_t K = sdims[nb];
  if (rets.size() != stats.size()) return invalid("one result per statistic");
  const bool idx64 = start.element_type() == ffi::DataType::S64;
  if (!idx64 && start.element_type() != ffi::DataType::S32) return invalid("start must be int32/int64");
  if (count.element_type() != start.element_type()) return invalid("count must have start's dtype");

  // the result's batch dimensions: the largest of the operands' (each is 1 or the result's)
  std::vector<Out> outs(stats.size());
  std::vector<int64_t> bdims(nb, 1);
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nb + 2) return invalid("results must be (*batch, K, C)");
    for (size_t d = 0; d < nb; ++d) bdims[d] = rdims[d];
    outs[i].base = (*res)->untyped_data();
    outs[i].stat = stats[i];
    outs[i].q = i < qs.size() ? qs[i] : 0.0;
    outs[i].integer = stats[i] == kCount;
    outs[i].i64 = (*res)->element_type() == ffi::DataType::S64;
  }
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nb, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto smap = BatchMap::make(sdims, nb, bdims, K, "start");
  if (!smap.has_value()) return smap.error();
  auto cmap = BatchMap::make(count.dimensions(), nb, bdims, K, "count");
  if (!cmap.has_value()) return cmap.error();

  bool folded = false, order = false;
  for (const Out& o : outs) (is_order(o.stat) ? order : folded) = true;
  std::vector<Out> item(outs);
  const size_t iw = idx64 ? 8 : 4;
  const T* ybase = static_cast<const T*>(y.untyped_data());
  for (int64_t b = 0; b < B; ++b) {
    Ranges r{static_cast<const char*>(start.untyped_data()) + smap->offset(b) * iw,
             static_cast<const char*>(count.untyped_data()) + cmap->offset(b) * iw, idx64, K, N};
    r.scan();
    if (!r.valid) {  // the caller clips; a bad range is an error, never a wild read
      return invalid("a range lies outside [0, N): clip the ranges first");
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      const size_t width = outs[i].integer ? (outs[i].i64 ? 8 : 4) : sizeof(T);
      item[i].base = static_cast<char*>(outs[i].base) + b * K * C * width;
    }
    const T* yb = ybase + ymap->offset(b);
    for (int64_t ch = 0; ch < C; ++ch) {
      if (folded) folded_ranges<T>(yb, C, ch, r, item, omit, ddof);
      if (order) {
        order_ranges<T>(yb, C, ch, r, item, omit);
        capacity_rule<T>(r, C, ch, item, capacity);
      }
    }
  }
  return ffi::Error::Success();
}

ffi::Error RangeStatsImpl(ffi::AnyBuffer y, ffi::AnyBuffer start, ffi::AnyBuffer count,
                          ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
                          ffi::Span<const double> qs, int64_t omit, int64_t ddof, int64_t capacity) {
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return run<float>(y, start, count, rets, stats, qs, omit != 0, ddof, capacity);
    case ffi::DataType::F64:
      return run<double>(y, start, count, rets, stats, qs, omit != 0, ddof, capacity);
    default:
      return invalid("y must be float32 or float64");
  }
}


// jaxsubset_sliding_stats(y, length) -> one result per statistic, (*B, N, C): fixed-count
// windows with no range arrays: row k's window is [k + lead - window + 1, k + lead] cut to the
// first length[b] rows. min_periods >= 0: every result (count too) in y's float dtype, NaN
// where the window has fewer than min_periods points counted as "count" counts them (rows,
// NaN included, for "count" itself: pandas), written once.
template <typename T>
ffi::Error run_sliding(ffi::AnyBuffer y, ffi::AnyBuffer length, ffi::RemainingRets rets,
                       ffi::Span<const int64_t> stats, ffi::Span<const double> qs, bool omit,
                       int64_t ddof, int64_t window, int64_t lead, int64_t min_periods,
                       int64_t capacity) {
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
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nb + 2 || rdims[nb] != N) return invalid("results must be (*batch, N, C)");
    for (size_t d = 0; d < nb; ++d) bdims[d] = rdims[d];
    outs[i].base = (*res)->untyped_data();
    outs[i].stat = stats[i];
    outs[i].q = i < qs.size() ? qs[i] : 0.0;
    outs[i].integer = stats[i] == kCount && !finish_mp;
    outs[i].i64 = (*res)->element_type() == ffi::DataType::S64;
  }
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nb, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto lmap = BatchMap::make(length.dimensions(), nb, bdims, 1, "length");
  if (!lmap.has_value()) return lmap.error();
  const T* ybase = static_cast<const T*>(y.untyped_data());
  std::vector<Out> item, blocks, folded, order, rest;
  for (int64_t b = 0; b < B; ++b) {
    const char* lp = static_cast<const char*>(length.untyped_data()) + lmap->offset(b) * (l64 ? 8 : 4);
    int64_t len = l64 ? *reinterpret_cast<const int64_t*>(lp) : *reinterpret_cast<const int32_t*>(lp);
    len = len < 0 ? 0 : (len > N ? N : len);
    Ranges r{nullptr, nullptr, false, N, N};
    r.sliding = true;
    r.win = window;
    r.lead = lead;
    r.len = len;
    item.assign(outs.begin(), outs.end());
    blocks.clear();
    folded.clear();
    order.clear();
    rest.clear();
    for (size_t i = 0; i < outs.size(); ++i) {
      const size_t width = outs[i].integer ? (outs[i].i64 ? 8 : 4) : sizeof(T);
      item[i].base = static_cast<char*>(outs[i].base) + b * N * C * width;
      if (is_block_stat(item[i].stat)) {  // the block loop, min_periods finished inside
        blocks.push_back(item[i]);
        continue;
      }
      rest.push_back(item[i]);
      (is_order(item[i].stat) ? order : folded).push_back(item[i]);
    }
    // (a pass over every row: only for the statistics that read the ranges' summary; the
    // block loop and the min_periods pass below never do)
    if (!folded.empty() || !order.empty()) r.scan();
    const T* yb = ybase + ymap->offset(b);
    for (int64_t ch = 0; ch < C; ++ch) {
      if (!blocks.empty()) {
        sliding_folded<T>(yb, C, ch, N, len, window, lead, blocks, omit, ddof, min_periods);
      }
      if (!folded.empty()) folded_ranges<T>(yb, C, ch, r, folded, omit, ddof);
      if (!order.empty()) {
        order_ranges<T>(yb, C, ch, r, order, omit);
        capacity_rule<T>(r, C, ch, order, capacity);
      }
      if (!finish_mp || rest.empty()) continue;
      // the counted points of each window (NaN left out with omit), kept by two pointers
      // (exact), then NaN where it is below min_periods
      const T nan = nan_v<T>();
      if (!omit) {
        // every row counted: a window's rows (k + lead + 1 cut to len, minus its start) are
        // concave in k, so the windows under min_periods are a prefix and a suffix
        auto put_nan = [&](int64_t k) {
          for (const Out& o : rest) o.put<T>(k, C, ch, nan);
        };
        int64_t k = 0;
        for (; k < N && r.ct(k) < min_periods; ++k) put_nan(k);
        for (int64_t j = N - 1; j >= k && r.ct(j) < min_periods; --j) put_nan(j);
        continue;
      }
      int64_t lo = 0, hi = 0, nans = 0;
      for (int64_t k = 0; k < N; ++k) {
        const int64_t s = r.st(k), e = s + r.ct(k);
        for (; hi < e; ++hi) nans += std::isnan(static_cast<double>(yb[hi * C + ch]));
        for (; lo < s; ++lo) nans -= std::isnan(static_cast<double>(yb[lo * C + ch]));
        if (e - s - nans < min_periods) {
          for (const Out& o : rest) o.put<T>(k, C, ch, nan);
        }
      }
    }
  }
  return ffi::Error::Success();
}

ffi::Error SlidingStatsImpl(ffi::AnyBuffer y, ffi::AnyBuffer length, ffi::RemainingRets rets,
                            ffi::Span<const int64_t> stats, ffi::Span<const double> qs,
                            int64_t omit, int64_t ddof, int64_t window, int64_t lead,
                            int64_t min_periods, int64_t capacity) {
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return run_sliding<float>(y, length, rets, stats, qs, omit != 0, ddof, window, lead, min_periods,
                                 capacity);
    case ffi::DataType::F64:
      return run_sliding<double>(y, length, rets, stats, qs, omit != 0, ddof, window, lead, min_periods,
                                 capacity);
    default:
      return invalid("y must be float32 or float64");
  }
}

// jaxsubset_xwidth_stats(x, y, width, length) -> one result per statistic, (*B, N, C) in y's
// float dtype: one trailing x-width window per row of sorted x (xwidth.cc resolves them by
// two pointers: no bound arrays from XLA), the statistics over them, min_periods finished
// (as _sliding.finish: "count" compares it with the window's rows, the others with the
// counted points). x (*B, N) float32/float64/int32/int64; width (*B, k): float x: the
// width in the promoted float dtype (k = 1); integer x: (wrap, t, big) in x's dtype (k = 3);
// length (*B, 1): the present rows (later rows: empty windows).
template <typename T>
ffi::Error run_xwidth(ffi::AnyBuffer x, ffi::AnyBuffer y, ffi::AnyBuffer width,
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
  if (xfloat && ((wt != ffi::DataType::F32 && wt != ffi::DataType::F64) || kw != 1 ||
                 (xt == ffi::DataType::F64 && wt != ffi::DataType::F64))) {
    return invalid("the width of float x must be one value of their promoted float dtype");
  }
  if (xint && (wt != xt || kw != 3)) return invalid("the width of integer x must be (wrap, t, big)");
  std::vector<Out> outs(stats.size());
  std::vector<int64_t> bdims(nb, 1);
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nb + 2 || rdims[nb] != N) return invalid("results must be (*batch, N, C)");
    for (size_t d = 0; d < nb; ++d) bdims[d] = rdims[d];
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
    XWidth a{static_cast<const char*>(x.untyped_data()) + xmap->offset(b) * xw, xtype,
             static_cast<const char*>(width.untyped_data()) + wmap->offset(b) * ww,
             wt == ffi::DataType::F64, N, len, lo_right, hi_right};
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
    const int64_t fixed = len != N ? 0 : xwidth_fixed(a);
    for (int64_t ch = 0; ch < C && !queued.empty(); ++ch) {
      if (fixed > 0) {
        sliding_folded<T>(yb, C, ch, N, len, fixed, 0, queued, omit, ddof, min_periods);
      } else {
        xwidth_folded<T>(a, yb, C, ch, queued, omit, ddof, min_periods);
      }
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
    for (int64_t ch = 0; ch < C; ++ch) {
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
    }
  }
  return ffi::Error::Success();
}

ffi::Error XwidthStatsImpl(ffi::AnyBuffer x, ffi::AnyBuffer y, ffi::AnyBuffer width,
                           ffi::AnyBuffer length, ffi::RemainingRets rets,
                           ffi::Span<const int64_t> stats, ffi::Span<const double> qs,
                           int64_t omit, int64_t ddof, int64_t lo_right, int64_t hi_right,
                           int64_t min_periods, int64_t capacity) {
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return run_xwidth<float>(x, y, width, length, rets, stats, qs, omit != 0, ddof,
                               lo_right != 0, hi_right != 0, min_periods, capacity);
    case ffi::DataType::F64:
      return run_xwidth<double>(x, y, width, length, rets, stats, qs, omit != 0, ddof,
                                lo_right != 0, hi_right != 0, min_periods, capacity);
    default:
      return invalid("y must be float32 or float64");
  }
}

}  // namespace
}  // namespace jaxsubset

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetRangeStats, jaxsubset::RangeStatsImpl,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()  // y
                                  .Arg<xla::ffi::AnyBuffer>()  // start
                                  .Arg<xla::ffi::AnyBuffer>()  // count
                                  .RemainingRets()
                                  .Attr<xla::ffi::Span<const int64_t>>("stats")
                                  .Attr<xla::ffi::Span<const double>>("qs")
                                  .Attr<int64_t>("omit")
                                  .Attr<int64_t>("ddof")
                                  .Attr<int64_t>("capacity"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetSlidingStats, jaxsubset::SlidingStatsImpl,
                              xla::ffi::Ffi::Bind()
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
// bins.cc
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxsubsetBinStats);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxsubsetBinnumber);
// ewm.cc
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxsubsetEwmStats);

namespace {

template <typename T>
nb::capsule capsule(T* fn) {
  static_assert(std::is_invocable_r_v<XLA_FFI_Error*, T, XLA_FFI_CallFrame*>,
                "not an XLA FFI handler");
  return nb::capsule(reinterpret_cast<void*>(fn));
}

}  // namespace

NB_MODULE(_kernels, m) {
  m.def("registrations", []() {
    nb::dict d;
    d["jaxsubset_range_stats"] = capsule(JaxsubsetRangeStats);
    d["jaxsubset_sliding_stats"] = capsule(JaxsubsetSlidingStats);
    d["jaxsubset_xwidth_stats"] = capsule(JaxsubsetXwidthStats);
    d["jaxsubset_bin_stats"] = capsule(JaxsubsetBinStats);
    d["jaxsubset_binnumber"] = capsule(JaxsubsetBinnumber);
    d["jaxsubset_ewm_stats"] = capsule(JaxsubsetEwmStats);
    return d;
  });
  // what the handlers were built against: the import guard compares it with the running jaxlib
  m.def("build_info", []() {
    nb::dict d;
    d["jaxlib"] = JAXSUBSET_JAXLIB_BUILD_VERSION;
    d["ffi_api"] = nb::make_tuple(XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
    return d;
  });
}
