// Binned statistics (issue 27): the FFI handler jaxsubset_bin_stats.
//
// jaxsubset_bin_stats(y, src, edges, dec) -> one result per requested statistic
//   y      (*B, N, C) float32/float64 (integers and float16 are converted by the caller)
//   src    (*B, N)    mode 0: int32/int64 bin labels (0..K-1; any other value: in no bin);
//                     modes 1 (any order) and 2 (ascending): float32/float64 positions x,
//                     in the edges' dtype
//   edges  (*B, K + 1) the strictly increasing bin edges (modes 1, 2; mode 0: unused)
//   dec    (*B, 1)    int32, the decimals of SciPy's last-edge rule (modes 1, 2); or (*B, 2):
//                     then the real number of bins nr (1..K) follows: edges padded past the
//                     last real one (eager buckets), whose rule applies at edge nr; result
//                     bins nr..K-1 hold no point
//   results (*B, K, C): y's float dtype, "count" in an int32/int64 dtype
//   attrs  stats (codes of common.h), qs, omit (0/1), ddof, mode (+ 4: the order statistics
//          rank NaN above every value, SciPy's propagate median: NaN where a rank read is a
//          NaN's)
//
// The bin of a point is EXACTLY _bin_numbers.binnumber's: the number of edges at or below x,
// compared as order-preserving integer keys (resolve/_keys.keys: no flush of subnormals, -0.0
// as +0.0), NaN above every bin; a point at or above the last edge whose numpy.around(x, dec)
// equals around(last, dec) goes to the last bin (SciPy's rounding rule); points outside
// [edges[0], last] are in no bin. Bins are resolved here (bin_edges.h: an arithmetic guess
// proven within one bin for the edges at hand and one exact key comparison each way; else a
// table over equal cells, verified, and a binary search), so no label array is written
// unless a second pass must read labels the proven guess does not give.
//
// Statistics (bin_fold.h: the folded ones; bin_order.h: median, quantiles), with the
// conventions of the range kernel (ranges.cc's per-range road):
// - folded ones (count, sum, mean, var, std, sem, min, max, first, last, skew, kurt): one pass
//   accumulates every bin's counts, sum, extremes and the sum of deviations from the bin's
//   first finite point, in point order; a second pass (var/std/sem/skew/kurt) the central
//   moments about the bin's mean: never a difference of running sums, and a bin's result
//   depends on its own points only (in their order);
// - order ones (median, quantile): the points grouped by bin (a counting sort, stable, skipped
//   where the labels already ascend) and a selection per bin, order.cc's: bit for bit the
//   reference road's.
// Mode 2 (sorted x) finds each bin's index range by a binary search per edge and runs the
// range kernel on them (ranges.cc, order.cc): the same bits as the native range road.
//
// Threads (XLA's intra-op pool, parallel.h; bin_pieces.h cuts the work by the data alone, so
// the bits never depend on the number of threads, JAXSUBSET_NATIVE_THREADS=1 included):
// sorted x: the edges' searches and then the bins in pieces (each bin reduced on its own:
// the one-thread bits); labels in any order: pieces of points, each with its own partials
// per bin merged in piece order (bin_fold.h: below 2**18 points one piece, the one-pass
// bits; above, the sums and the mean's deviations are summed piece by piece), the medians'
// counting sort in pieces (the same permutation) and the selections in pieces of bins;
// batches of small items: pieces of items.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

#include "bin_edges.h"
#include "bin_fold.h"
#include "bin_order.h"
#include "bin_pieces.h"
#include "kernels.h"
#include "parallel.h"


namespace jaxsubset {
namespace {

using bins::Acc;
using bins::GivenLabels;
using bins::kBlock;
using bins::StoredLabels;
using bins::XLabels;

ffi::Error bad(const std::string& what) {
  return ffi::Error::InvalidArgument("jaxsubset_bin_stats: " + what);
}

template <typename T, typename Lab>
void stats_by_labels(xla::ffi::ThreadPool* pool, const T* y, int64_t C, int64_t N, int64_t nb,
                     const Lab& lab, const std::vector<Out>& outs, bool omit, int64_t ddof,
                     bool nan_last) {
  std::vector<Out> folded, order;
  for (const Out& o : outs) (is_order(o.stat) ? order : folded).push_back(o);
  if (!folded.empty()) {
    for (int64_t ch = 0; ch < C; ++ch) {
      bins::folded_labels<T>(pool, y, C, ch, N, nb, lab, folded, omit, ddof);
    }
  }
  if (!order.empty()) bins::order_by_labels<T>(pool, y, C, N, nb, lab, order, omit, nan_last);
}

// ascending x: every bin's index range by a binary search per edge (the edges in pieces),
// then a vectorised pass per bin (the order statistics: a selection per bin, order.cc's), the
// bins in pieces of about equal points: each bin's result is its own, whatever the cut
template <typename T, typename TX>
void stats_sorted(xla::ffi::ThreadPool* pool, const T* y, int64_t C, int64_t N, const TX* x,
                  const Edges<TX>& e, int64_t nb, const std::vector<Out>& outs, bool omit,
                  int64_t ddof, bool nan_last) {
  // the edges' nr bins, then empty result bins up to nb (edges padded past the real ones)
  const int64_t nr = e.nbins();
  std::vector<int64_t> b(nr + 1), start(nb, N), count(nb, 0);
  const int64_t sp = bins::search_pieces(N, nr + 1);
  const int64_t per = (nr + 1 + sp - 1) / sp;
  for_pieces(pool, sp, [&](int64_t j) {
    const int64_t k1 = std::min(nr + 1, (j + 1) * per);
    for (int64_t k = j * per; k < k1; ++k) b[k] = e.lower(x, N, k);
  });
  b[nr] = e.last_end(x, N, b[nr]);
  for (int64_t k = 0; k < nr; ++k) {
    start[k] = b[k];
    count[k] = std::max<int64_t>(b[k + 1] - b[k], 0);
  }
  bool folded = false, order = false;
  for (const Out& o : outs) (is_order(o.stat) ? order : folded) = true;
  const std::vector<int64_t> cut = bins::bin_pieces(count.data(), nb);
  for_pieces(pool, static_cast<int64_t>(cut.size()) - 1, [&](int64_t j) {
    const int64_t k0 = cut[j], n = cut[j + 1] - k0;
    const std::vector<Out> mine = bins::from_bin(outs, k0, C, sizeof(T));
    for (int64_t ch = 0; ch < C; ++ch) {
      if (folded) {
        bins::sorted_folded_any<T>(y, C, ch, start.data() + k0, count.data() + k0, n, mine,
                                   omit, ddof);
      }
      if (order) {
        bins::order_bins<T>(y, C, ch, start.data() + k0, count.data() + k0, n, mine, omit,
                            nan_last);
      }
    }
  });
}

// one batch item's statistics into `item` (its rows of the results)
template <typename T, typename S>
void stats_item(xla::ffi::ThreadPool* pool, const T* yb, const S* sb, const S* eb, int32_t db,
                int64_t nr, int64_t N, int64_t C, int64_t K, int64_t mode,
                const std::vector<Out>& item, bool omit, int64_t ddof, bool nan_last) {
  if constexpr (std::is_floating_point_v<S>) {
    // nr <= K edges' bins; a point in none of them is labelled K (in no result bin)
    Edges<S> e(eb, nr, db, K);
    if (mode == 2) {
      stats_sorted<T, S>(pool, yb, C, N, sb, e, K, item, omit, ddof, nan_last);
      return;
    }
    // a second pass over the labels (moments, order statistics, other channels): the
    // proven lookup resolves them again (cheaper than an int32 label array's traffic), or,
    // for one channel's moments, the first pass records them in 2 bytes a point; edges
    // without the proven lookup resolve them once (in pieces of points: each writes its
    // own), kept
    bool again = C > 1, has_order = false;
    for (const Out& o : item) {
      has_order |= is_order(o.stat);
      again |= is_order(o.stat) || o.stat == kVar || o.stat == kStd || o.stat == kSem ||
               o.stat == kSkew || o.stat == kKurt;
    }
    if (again && !e.proven()) {
      std::vector<int32_t> labs(static_cast<size_t>(N));
      const bins::PointPieces pp = bins::point_pieces(N, K);
      for_pieces(pool, pp.count, [&](int64_t p) {
        const int64_t hi = pp.end(p, N);
        for (int64_t i0 = pp.begin(p); i0 < hi; i0 += kBlock) {
          e.labels(sb + i0, std::min(kBlock, hi - i0), labs.data() + i0);
        }
      });
      stats_by_labels<T>(pool, yb, C, N, K, StoredLabels{labs.data()}, item, omit, ddof,
                         nan_last);
    } else {
      // one channel's moments: the second pass reads the labels the first one found, kept
      // in 2 bytes a point (bin_fold.h: Recording), rather than finding them again from x
      // (where the record's memory is not to be had, they are found again: the same labels)
      std::unique_ptr<uint16_t[]> rec;
      if (again && C == 1 && K < 0xFFFF && !has_order) {
        rec.reset(new (std::nothrow) uint16_t[static_cast<size_t>(N)]);
      }
      const XLabels<S> from_x{sb, &e};
      if (rec) {
        const bins::Recording<XLabels<S>> first{&from_x, rec.get()};
        const bins::Recorded second{rec.get()};
        bins::folded_labels<T>(pool, yb, C, 0, N, K, first, item, omit, ddof, &second);
      } else {
        stats_by_labels<T>(pool, yb, C, N, K, from_x, item, omit, ddof, nan_last);
      }
    }
  } else {
    (void)eb;
    (void)db;
    (void)nr;
    (void)mode;
    stats_by_labels<T>(pool, yb, C, N, K, GivenLabels<S>{sb, K}, item, omit, ddof, nan_last);
  }
}

template <typename T, typename S>
ffi::Error run(xla::ffi::ThreadPool* pool, ffi::AnyBuffer y, ffi::AnyBuffer src,
               ffi::AnyBuffer edges, ffi::AnyBuffer dec,
               ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
               ffi::Span<const double> qs, bool omit, int64_t ddof, int64_t mode) {
  const bool nan_last = (mode & 4) != 0;  // SciPy's propagate median (see order_bins)
  mode &= 3;
  constexpr bool is_x = std::is_floating_point_v<S>;
  if (is_x != (mode != 0)) return bad("mode 0 takes int labels, modes 1 and 2 float x");
  auto ydims = y.dimensions();
  if (ydims.size() < 2) return bad("y must be (*batch, N, C)");
  const size_t nbd = ydims.size() - 2;
  const int64_t N = ydims[nbd], C = ydims[nbd + 1];
  auto sdims = src.dimensions();
  if (sdims.size() != nbd + 1 || sdims[nbd] != N) return bad("src must be (*batch, N)");
  auto edims = edges.dimensions();
  auto ddims = dec.dimensions();
  if (edims.size() != nbd + 1 || ddims.size() != nbd + 1) return bad("edges, dec: (*batch, M)");
  if (dec.element_type() != ffi::DataType::S32) return bad("dec must be int32");
  if (rets.size() != stats.size() || stats.size() == 0) return bad("one result per statistic");
  std::vector<Out> outs(stats.size());
  std::vector<int64_t> bdims(nbd, 1);
  int64_t K = -1;
  for (size_t i = 0; i < stats.size(); ++i) {
    auto res = rets.get<ffi::AnyBuffer>(i);
    if (!res.has_value()) return res.error();
    auto rdims = (*res)->dimensions();
    if (rdims.size() != nbd + 2 || rdims[nbd + 1] != C) {
      return bad("results must be (*batch, K, C)");
    }
    if (K >= 0 && rdims[nbd] != K) return bad("every result has the same number of bins");
    K = rdims[nbd];
    for (size_t d = 0; d < nbd; ++d) bdims[d] = rdims[d];
    advise_huge(**res);  // (before the first write: see common.h)
    outs[i].base = (*res)->untyped_data();
    outs[i].stat = stats[i];
    outs[i].q = i < qs.size() ? qs[i] : 0.0;
    outs[i].integer = stats[i] == kCount;
    outs[i].i64 = (*res)->element_type() == ffi::DataType::S64;
    if (stats[i] < 0 || stats[i] >= kNumStats) return bad("unknown statistic code");
  }
  if (K >= std::numeric_limits<int32_t>::max()) return bad("at most 2**31 - 2 bins");
  if (is_x) {
    if (edims[nbd] != K + 1) return bad("edges must hold K + 1 edges");
    if (edges.element_type() != src.element_type()) return bad("edges must have x's dtype");
  }
  // dec (*batch, 1): the decimals; (*batch, 2): also the real number of bins nr <= K of
  // edges padded past the last real one (eager buckets): bins nr..K-1 come back empty
  const int64_t nd = ddims[nbd];
  if (nd != 1 && nd != 2) return bad("dec must be (*batch, 1) or (*batch, 2)");
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto ymap = BatchMap::make(ydims, nbd, bdims, N * C, "y");
  if (!ymap.has_value()) return ymap.error();
  auto smap = BatchMap::make(sdims, nbd, bdims, N, "src");
  if (!smap.has_value()) return smap.error();
  auto emap = BatchMap::make(edims, nbd, bdims, edims[nbd], "edges");
  if (!emap.has_value()) return emap.error();
  auto dmap = BatchMap::make(ddims, nbd, bdims, nd, "dec");
  if (!dmap.has_value()) return dmap.error();
  const T* ybase = static_cast<const T*>(y.untyped_data());
  const S* sbase = static_cast<const S*>(src.untyped_data());
  const S* ebase = static_cast<const S*>(edges.untyped_data());
  const int32_t* dbase = static_cast<const int32_t*>(dec.untyped_data());
  if (is_x && nd == 2) {
    for (int64_t b = 0; b < B; ++b) {
      const int32_t nr = dbase[dmap->offset(b) + 1];
      if (nr < 1 || nr > K) return bad("the real number of bins must be in 1..K");
    }
  }
  auto one = [&](int64_t b, xla::ffi::ThreadPool* inner) {
    const S* eb = is_x ? ebase + emap->offset(b) : nullptr;
    const int32_t db = is_x ? dbase[dmap->offset(b)] : 0;
    const int64_t nr = is_x && nd == 2 ? dbase[dmap->offset(b) + 1] : K;
    stats_item<T, S>(inner, ybase + ymap->offset(b), sbase + smap->offset(b), eb, db, nr, N, C,
                     K, mode, bins::from_bin(outs, b * K, C, sizeof(T)), omit, ddof, nan_last);
  };
  if (B > 1 && N < 2 * bins::kPiecePoints) {
    // items too small to be cut (one piece of points each): pieces of items instead, each
    // item computed alone as it would be in any order
    const int64_t per = std::max<int64_t>(1, bins::kPiecePoints / std::max<int64_t>(N, 1));
    for_pieces(pool, (B + per - 1) / per, [&](int64_t j) {
      for (int64_t b = j * per; b < std::min(B, (j + 1) * per); ++b) one(b, nullptr);
    });
  } else {
    for (int64_t b = 0; b < B; ++b) one(b, pool);
  }
  return ffi::Error::Success();
}

template <typename T>
ffi::Error by_src(xla::ffi::ThreadPool* pool, ffi::AnyBuffer y, ffi::AnyBuffer src,
                  ffi::AnyBuffer edges, ffi::AnyBuffer dec,
                  ffi::RemainingRets rets, ffi::Span<const int64_t> stats,
                  ffi::Span<const double> qs, bool omit, int64_t ddof, int64_t mode) {
  switch (src.element_type()) {
    case ffi::DataType::S32:
      return run<T, int32_t>(pool, y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    case ffi::DataType::S64:
      return run<T, int64_t>(pool, y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    case ffi::DataType::F32:
      return run<T, float>(pool, y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    case ffi::DataType::F64:
      return run<T, double>(pool, y, src, edges, dec, rets, stats, qs, omit, ddof, mode);
    default:
      return bad("src must be int32/int64 labels or float32/float64 x");
  }
}

ffi::Error BinStatsImpl(xla::ffi::ThreadPool pool, ffi::AnyBuffer y, ffi::AnyBuffer src,
                        ffi::AnyBuffer edges,
                        ffi::AnyBuffer dec, ffi::RemainingRets rets,
                        ffi::Span<const int64_t> stats, ffi::Span<const double> qs, int64_t omit,
                        int64_t ddof, int64_t mode) {
  if ((mode & 3) > 2 || mode < 0 || mode > 7) return bad("mode must be 0, 1 or 2 (+ 4)");
  switch (y.element_type()) {
    case ffi::DataType::F32:
      return by_src<float>(&pool, y, src, edges, dec, rets, stats, qs, omit != 0, ddof, mode);
    case ffi::DataType::F64:
      return by_src<double>(&pool, y, src, edges, dec, rets, stats, qs, omit != 0, ddof, mode);
    default:
      return bad("y must be float32 or float64");
  }
}


// jaxsubset_binnumber(x, edges, dec) -> d: _bin_numbers.binnumber of float x against edges of its
// dtype, EXACTLY (the rule of Edges::bin above; NaN: nb + 1 whatever its sign bit)
//   x (*B, N) float32/float64, edges (*B, K + 1) x's dtype, dec (*B, 1) int32 (or (*B, 2):
//   the real number of bins nr follows, as bin_stats': numbers 0..nr + 1)
//   d (*B, N) int32/int64: 0 below the first edge, nb + 1 above the last, else 1..nb
// A call of its own, so XLA drops it where the bin numbers are not read. Points in pieces on
// the intra-op pool, in blocks through Edges::numbers (the quick road where it is taken).
template <typename TX, typename TD>
ffi::Error binnumber_run(xla::ffi::ThreadPool* pool, ffi::AnyBuffer x, ffi::AnyBuffer edges,
                         ffi::AnyBuffer dec, ffi::AnyBuffer out) {
  auto odims = out.dimensions();
  if (odims.size() < 1) return bad("binnumber: the result must be (*batch, N)");
  const size_t nbd = odims.size() - 1;
  const int64_t N = odims[nbd];
  auto xdims = x.dimensions(), edims = edges.dimensions(), ddims = dec.dimensions();
  if (xdims.size() != nbd + 1 || xdims[nbd] != N) return bad("binnumber: x must be (*batch, N)");
  if (edims.size() != nbd + 1 || ddims.size() != nbd + 1 || (ddims[nbd] != 1 && ddims[nbd] != 2))
    return bad("binnumber: edges (*batch, K + 1), dec (*batch, 1) or (*batch, 2)");
  const int64_t nd = ddims[nbd];  // 2: the real number of bins follows (bin_stats' dec)
  if (edges.element_type() != x.element_type()) return bad("binnumber: edges must have x's dtype");
  if (dec.element_type() != ffi::DataType::S32) return bad("binnumber: dec must be int32");
  const int64_t K = edims[nbd] - 1;
  if (K < 1) return bad("binnumber: at least two edges");
  std::vector<int64_t> bdims(odims.begin(), odims.begin() + nbd);
  int64_t B = 1;
  for (int64_t d : bdims) B *= d;
  auto xmap = BatchMap::make(xdims, nbd, bdims, N, "x");
  if (!xmap.has_value()) return xmap.error();
  auto emap = BatchMap::make(edims, nbd, bdims, K + 1, "edges");
  if (!emap.has_value()) return emap.error();
  auto dmap = BatchMap::make(ddims, nbd, bdims, nd, "dec");
  if (!dmap.has_value()) return dmap.error();
  const TX* xbase = static_cast<const TX*>(x.untyped_data());
  advise_huge(out);  // (before the first write: see common.h)
  TD* obase = static_cast<TD*>(out.untyped_data());
  for (int64_t b = 0; b < B; ++b) {
    const TX* xb = xbase + xmap->offset(b);
    const TX* eb = static_cast<const TX*>(edges.untyped_data()) + emap->offset(b);
    const int32_t* dp = static_cast<const int32_t*>(dec.untyped_data()) + dmap->offset(b);
    const int64_t nr = nd == 2 ? dp[1] : K;
    if (nr < 1 || nr > K) return bad("binnumber: the real number of bins must be in 1..K");
    Edges<TX> e(eb, nr, dp[0]);
    TD* ob = obase + b * N;
    // pieces of points on the pool (each point's number is its own: any cut, the same)
    const bins::PointPieces pp = bins::point_pieces(N, K);
    for_pieces(pool, pp.count, [&](int64_t p) {
      const int64_t hi = pp.end(p, N);
      for (int64_t i0 = pp.begin(p); i0 < hi; i0 += kBlock) {
        const int64_t len = std::min(kBlock, hi - i0);
        e.numbers(xb + i0, len, ob + i0);
      }
    });
  }
  return ffi::Error::Success();
}

template <typename TX>
ffi::Error binnumber_by_out(xla::ffi::ThreadPool* pool, ffi::AnyBuffer x, ffi::AnyBuffer edges,
                            ffi::AnyBuffer dec, ffi::AnyBuffer out) {
  switch (out.element_type()) {
    case ffi::DataType::S32:
      return binnumber_run<TX, int32_t>(pool, x, edges, dec, out);
    case ffi::DataType::S64:
      return binnumber_run<TX, int64_t>(pool, x, edges, dec, out);
    default:
      return bad("binnumber: the result must be int32 or int64");
  }
}

ffi::Error BinnumberImpl(xla::ffi::ThreadPool pool, ffi::AnyBuffer x, ffi::AnyBuffer edges,
                         ffi::AnyBuffer dec, ffi::Result<ffi::AnyBuffer> out) {
  switch (x.element_type()) {
    case ffi::DataType::F32:
      return binnumber_by_out<float>(&pool, x, edges, dec, *out);
    case ffi::DataType::F64:
      return binnumber_by_out<double>(&pool, x, edges, dec, *out);
    default:
      return bad("binnumber: x must be float32 or float64");
  }
}

}  // namespace
}  // namespace jaxsubset

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetBinStats, jaxsubset::BinStatsImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()  // the intra-op pool
                                  .Arg<xla::ffi::AnyBuffer>()  // y
                                  .Arg<xla::ffi::AnyBuffer>()  // src: labels or x
                                  .Arg<xla::ffi::AnyBuffer>()  // edges
                                  .Arg<xla::ffi::AnyBuffer>()  // dec
                                  .RemainingRets()
                                  .Attr<xla::ffi::Span<const int64_t>>("stats")
                                  .Attr<xla::ffi::Span<const double>>("qs")
                                  .Attr<int64_t>("omit")
                                  .Attr<int64_t>("ddof")
                                  .Attr<int64_t>("mode"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxsubsetBinnumber, jaxsubset::BinnumberImpl,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<xla::ffi::ThreadPool>()  // the intra-op pool
                                  .Arg<xla::ffi::AnyBuffer>()  // x
                                  .Arg<xla::ffi::AnyBuffer>()  // edges
                                  .Arg<xla::ffi::AnyBuffer>()  // dec
                                  .Ret<xla::ffi::AnyBuffer>());  // d
