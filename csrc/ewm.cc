// jaxsubset_ewm_stats(t, y, lam) -> one result per requested statistic: the time-based
// exponentially weighted mean/var/std of src/jaxsubset/_ewm.py in ONE serial pass.
//
//   t    (*B, P, N) the times as the pure-JAX road holds them: P parts (1, or float32 hi + lo
//        from the host), float32/float64 or uint32/uint64 (differences from the first point)
//   y    (*B, N, C) float32/float64 (integers and float16 are converted by the caller)
//   lam  (*B, 1)    log(2) / halflife in y's dtype
//   results (*B, N, C) in y's dtype
//   attrs  stats (0 mean, 1 var, 2 std), min_periods, bias, omit (0/1), safe (_ewm.SAFE)
//
// Each point's partial is combined into the running one with exactly the formulas of
// _ewm.combine (shifted moments; V and E as sums of non-negative terms carrying the common
// scale exp(l) after long gaps; NaN readings identity partials; infinities counted), so the
// results are the scan's up to the rounding of exp/log. No global state; batch dimensions of
// size 1 in an operand are broadcast (vmap_method="expand_dims").
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

#include "common.h"

namespace jaxsubset {
namespace {

ffi::Error ewm_invalid(const std::string& what) {
  return ffi::Error::InvalidArgument("jaxsubset_ewm_stats: " + what);
}

// the gap (tb - ta) of one part in the part's own arithmetic, then in T, as the scan's
// `(tb - ta).astype(calc)` (unsigned: exact, the times being sorted)
template <typename T, typename Tt>
inline T part_gap(Tt tb, Tt ta) {
  return static_cast<T>(static_cast<Tt>(tb - ta));
}

// One channel of one batch item: y (N, C) column ch, times P parts of N, results (N, C).
template <typename T, typename Tt>
void ewm_channel(const Tt* t, int64_t P, const T* y, int64_t N, int64_t C, int64_t ch, T lam,
                 T safe, T* mean, T* var, T* std, int64_t min_periods, bool bias, bool omit) {
  const T nan = nan_v<T>();
  const T inf = std::numeric_limits<T>::infinity();
  // u above this: log u > safe + 2 whatever the rounding of the logs, so the scan's scale
  // is 0 (no term of V and E underflows) and the logs need not be taken
  const T u_safe = std::exp(safe + T(2));
  // the running partial: the time index of its last finite reading, W, k, m, V, E, l
  int64_t last = -1;
  T w = 1, k = 0, m = 0, v = 0, e = 0, l = 0;
  int64_t cnt = 0, pos = 0, neg = 0, nans = 0;
  const int64_t need = min_periods > 1 ? min_periods : 1;
  for (int64_t i = 0; i < N; ++i) {
    const T yi = y[i * C + ch];
    if (std::isfinite(yi)) {
      if (last < 0) {  // the earlier partial has no finite reading: the point's own
        w = 1, k = yi, m = 0, v = 0, e = 0, l = 0;
      } else {
        T gap = 0;
        for (int64_t p = 0; p < P; ++p) gap += part_gap<T, Tt>(t[p * N + i], t[p * N + last]);
        const T decay = lam * gap;
        const T waf = w * std::exp(-decay);
        const T wn = waf + T(1);  // the later partial (this point) weighs wb = 1
        const T u = waf / wn, s = T(1) / wn;
        // the later partial is one reading: W_b = 1, k_b = y, m_b = V_b = E_b = l_b = 0, so
        // the scan's terms in V_b and E_b (times exp(min(l_b - ell, 0)) <= 1) are exact zeros
        T ell = 0, eu = u, fa;
        if (u > u_safe) {  // the scan's ell == 0: eu = u
          fa = l == 0 ? u : eu * std::exp(l);
        } else {
          const T log_u = std::log(w) - decay - std::log(wn);
          ell = log_u > safe ? T(0) : log_u;  // b has no pairs (E_b = 0): big = log u
          eu = ell == 0 ? u : std::exp(std::fmin(log_u - ell, T(0)));
          fa = eu * std::exp(l);
        }
        const T d = (yi - k) + (T(0) - m);  // the later mean minus the earlier, from shifts
        v = v * fa + s * ((d * d) * eu);
        e = T(2) * s * eu + e * fa * u;
        m = T(0) - (u > 0 ? u * d : T(0));
        w = wn, k = yi, l = ell;
      }
      last = i;
      ++cnt;
    } else if (std::isnan(yi)) {
      ++nans;
    } else if (yi > 0) {
      ++pos;
    } else {
      ++neg;
    }
    const bool good = cnt + pos + neg >= need && (omit || nans == 0);
    const bool infs = pos + neg > 0;
    if (mean != nullptr) {
      T r = nan;
      if (good) r = infs ? (neg > 0 ? (pos > 0 ? nan : -inf) : inf) : k + m;
      mean[i * C + ch] = r;
    }
    if (var != nullptr || std != nullptr) {
      T r;
      bool ok;
      if (bias) {
        r = v * std::exp(l), ok = cnt > 0;
      } else {
        r = v / (e > 0 ? e : T(1)), ok = e > 0;
      }
      r = good && ok && !infs ? std::fmax(r, T(0)) : nan;
      if (var != nullptr) var[i * C + ch] = r;
      if (std != nullptr) std[i * C + ch] = r > 0 ? std::sqrt(r) : r;
    }
  }
}

template <typename T, typename Tt>
ffi::Error run_ewm(ffi::AnyBuffer t, ffi::AnyBuffer y, ffi::AnyBuffer lam, ffi::RemainingRets rets,
                   ffi::Span<const int64_t> stats, int64_t min_periods, bool bias, bool omit,
                   double safe) {
  auto ydims = y.dimensions();
  if (ydims.size() < 2) return ewm_invalid("y must be (*batch, N, C)");
  const size_t nb = ydims.size() - 2;
  const int64_t N = ydims[nb], C = ydims[nb + 1];
  auto tdims = t.dimensions();
  if (tdims.size() != nb + 2 || tdims[nb + 1] != N) return ewm_invalid("t must be (*batch, P, N)");
  const int64_t P = tdims[nb];
  if (lam.dimensions().size() != nb + 1) return ewm_invalid("lam must be (*batch, 1)");
  if (lam.element_type() != y.element_type()) return ewm_invalid("lam must have y's dtype");
  if (rets.size() != stats.size()) return ewm_invalid("one result per statistic");
  std::vector<T*> outs(3, nullptr);
  std::vector<int64_t> bdims(nb, 1);
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nb + 2 || rdims[nb] != N || rdims[nb + 1] != C) {
      return ewm_invalid("results must be (*batch, N, C)");
    }
    if (stats[i] < 0 || stats[i] > 2) return ewm_invalid("statistics are 0 mean, 1 var, 2 std");
    for (size_t d = 0; d < nb; ++d) bdims[d] = rdims[d];
    advise_huge(**res);  // (before the first write: see common.h)
    outs[stats[i]] = static_cast<T*>((*res)->untyped_data());
  }
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nb, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto tmap = BatchMap::make(tdims, nb, bdims, P * N, "t");
  if (!tmap.has_value()) return tmap.error();
  auto lmap = BatchMap::make(lam.dimensions(), nb, bdims, 1, "lam");
  if (!lmap.has_value()) return lmap.error();
  const T* ybase = static_cast<const T*>(y.untyped_data());
  const Tt* tbase = static_cast<const Tt*>(t.untyped_data());
  const T* lbase = static_cast<const T*>(lam.untyped_data());
  const T tsafe = static_cast<T>(safe);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t off = b * N * C;
    T* mean = outs[0] ? outs[0] + off : nullptr;
    T* var = outs[1] ? outs[1] + off : nullptr;
    T* std = outs[2] ? outs[2] + off : nullptr;
    const T lb = lbase[lmap->offset(b)];
    for (int64_t ch = 0; ch < C; ++ch) {
      ewm_channel<T, Tt>(tbase + tmap->offset(b), P, ybase + ymap->offset(b), N, C, ch, lb, tsafe,
                         mean, var, std, min_periods, bias, omit);
    }
  }
  return ffi::Error::Success();
}

template <typename T>
ffi::Error by_time(ffi::AnyBuffer t, ffi::AnyBuffer y, ffi::AnyBuffer lam, ffi::RemainingRets rets,
                   ffi::Span<const int64_t> stats, int64_t min_periods, bool bias, bool omit,
                   double safe) {
  switch (t.element_type()) {
    case ffi::DataType::F32:
      return run_ewm<T, float>(t, y, lam, rets, stats, min_periods, bias, omit, safe);
    case ffi::DataType::F64:
      return run_ewm<T, double>(t, y, lam, rets, stats, min_periods, bias, omit, safe);
    case ffi::DataType::U32:
      return run_ewm<T, uint32_t>(t, y, lam, rets, stats, min_periods, bias, omit, safe);
    case ffi::DataType::U64:
      return run_ewm<T, uint64_t>(t, y, lam, rets, stats, min_periods, bias, omit, safe);
    default:
      return ewm_invalid("t must be float32/float64/uint32/uint64");
  }
}

ffi::Error EwmStatsImpl(ffi::AnyBuffer t, ffi::AnyBuffer y, ffi::AnyBuffer lam,
                        ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
                        int64_t min_periods, int64_t bias, int64_t omit, double safe) {
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return by_time<float>(t, y, lam, rets, stats, min_periods, bias != 0, omit != 0, safe);
    case ffi::DataType::F64:
      return by_time<double>(t, y, lam, rets, stats, min_periods, bias != 0, omit != 0, safe);
    default:
      return ewm_invalid("y must be float32 or float64");
  }
}

}  // namespace
}  // namespace jaxsubset

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetEwmStats, jaxsubset::EwmStatsImpl,
                              xla::ffi::Ffi::Bind()
                                  .Arg<xla::ffi::AnyBuffer>()  // t
                                  .Arg<xla::ffi::AnyBuffer>()  // y
                                  .Arg<xla::ffi::AnyBuffer>()  // lam
                                  .RemainingRets()
                                  .Attr<xla::ffi::Span<const int64_t>>("stats")
                                  .Attr<int64_t>("min_periods")
                                  .Attr<int64_t>("bias")
                                  .Attr<int64_t>("omit")
                                  .Attr<double>("safe"));
