// How the bins kernel (bins.cc) cuts one call into pieces for XLA's thread pool (parallel.h).
//
// Every cut here is a function of the data's shape and the bins' point counts alone, never of
// the number of threads, so JAXSUBSET_NATIVE_THREADS=1 and the default give the same bits:
//   - pieces of points (unsorted x, given labels): [p * len, (p + 1) * len), len a multiple of
//     kBlock, at least kPiecePoints points and 16 points per bin (a piece's partials, one slot
//     per bin, stay smaller than its points), at most kMaxPieces pieces; fewer than
//     2 * kPiecePoints points (or too many bins for them) make one piece: today's serial pass;
//   - pieces of bins (sorted x, the order statistics): consecutive bins holding about equal
//     numbers of points (each bin is reduced on its own, so the cut never changes a result);
//   - pieces of batch items (vmap) where each item is too small to be cut itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels.h"

namespace jaxsubset {
namespace bins {

constexpr int64_t kPiecePoints = int64_t{1} << 17;  // the least work worth a task
constexpr int64_t kMaxPieces = 16;
constexpr int64_t kPieceBlock = 64;  // = kBlock (bin_fold.h): pieces start on a block

// Pieces of N points for nb bins: a count and a length (the last piece is shorter).
struct PointPieces {
  int64_t count = 1;
  int64_t len = 0;
  int64_t begin(int64_t p) const { return p * len; }
  int64_t end(int64_t p, int64_t N) const { return std::min(N, (p + 1) * len); }
};

inline PointPieces point_pieces(int64_t N, int64_t nb) {
  PointPieces pp;
  pp.len = N;
  const int64_t least = std::max(kPiecePoints, 16 * (nb + 1));
  const int64_t want = std::min(kMaxPieces, N / least);
  if (want <= 1) return pp;
  const int64_t per = (N + want - 1) / want;
  pp.len = (per + kPieceBlock - 1) / kPieceBlock * kPieceBlock;
  pp.count = (N + pp.len - 1) / pp.len;
  return pp;
}

// Pieces of the bins 0..nb-1 by their point counts: bounds[j] .. bounds[j + 1] (bounds has the
// piece count + 1 entries). A bin weighs its points plus 16 (its own overhead).
inline std::vector<int64_t> bin_pieces(const int64_t* count, int64_t nb) {
  int64_t total = 0;
  for (int64_t k = 0; k < nb; ++k) total += count[k] + 16;
  const int64_t want = std::max<int64_t>(1, std::min(kMaxPieces, total / kPiecePoints));
  std::vector<int64_t> bounds{0};
  int64_t acc = 0;
  for (int64_t k = 0; k < nb && static_cast<int64_t>(bounds.size()) < want; ++k) {
    acc += count[k] + 16;
    // the cut after bin k where the running weight first reaches the next share
    if (acc * want >= total * static_cast<int64_t>(bounds.size())) bounds.push_back(k + 1);
  }
  bounds.push_back(nb);
  // (a cut at nb itself or a repeated cut would make an empty piece: dropped)
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  return bounds;
}

// Pieces of the binary searches of nb + 1 edges over N ascending points (each one log2(N)
// reads, far apart): about 256 edges a piece where N alone is worth cutting.
inline int64_t search_pieces(int64_t N, int64_t edges) {
  if (N < 2 * kPiecePoints) return 1;
  return std::max<int64_t>(1, std::min(kMaxPieces, edges / 256));
}

// The results `outs` seen from bin k0 on (a piece of bins writes its bins' rows through these,
// indexed from 0), for values of `width` bytes.
inline std::vector<Out> from_bin(const std::vector<Out>& outs, int64_t k0, int64_t C,
                                 size_t width) {
  std::vector<Out> r(outs);
  for (Out& o : r) {
    const size_t w = o.integer ? (o.i64 ? 8 : 4) : width;
    o.base = static_cast<char*>(o.base) + static_cast<size_t>(k0 * C) * w;
  }
  return r;
}

}  // namespace bins
}  // namespace jaxsubset
