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
    advise_huge(**res);  // (before the first write: see common.h)
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

// windows.cc
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxsubsetSlidingStats);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxsubsetXwidthStats);
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
