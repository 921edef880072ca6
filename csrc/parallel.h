// Pieces of one kernel call spread over XLA's intra-op thread pool, with results that cannot
// depend on the number of threads or on the schedule.
//
// The contract a kernel keeps when it calls `for_pieces`:
//   - the pieces are fixed by the data and the attributes alone (never by the thread count),
//   - piece p writes only its own outputs, or its own partial slot that the caller combines
//     afterwards in piece order,
// so one thread, two or sixteen give the same bits (the tests compare JAXSUBSET_NATIVE_THREADS=1
// with the default).
//
// The caller claims pieces too, and waits only for pieces another thread has already claimed
// (and so is running): it never waits for a task still queued behind busy pool threads, so a
// call cannot deadlock when the pool is busy or has no thread at all (XLA runs the task inline
// when the context has no pool). Tasks that start after every piece is claimed return at once;
// they hold the shared state, never the caller's stack.
#pragma once

#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace jaxsubset {

// The threads a call may use: the pool's, capped by JAXSUBSET_NATIVE_THREADS (a positive
// int, read per call: no global state; 1 runs every piece on the calling thread).
inline int64_t thread_limit(int64_t pool_threads) {
  int64_t n = pool_threads < 1 ? 1 : pool_threads;  // the caller counts as one of them
  if (const char* v = std::getenv("JAXSUBSET_NATIVE_THREADS")) {
    char* end = nullptr;
    const long long cap = std::strtoll(v, &end, 10);
    if (end != v && cap >= 1 && cap < n) n = cap;
  }
  return n;
}

namespace detail {

template <typename F>
struct Pieces {
  explicit Pieces(int64_t n, const F& f) : n(n), fn(f) {}
  const int64_t n;
  const F fn;  // a copy: a late task may outlive the caller's frame
  std::atomic<int64_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  int64_t done = 0;  // finished pieces (under mu)

  // claim and run pieces until none is left
  void work() {
    int64_t ran = 0;
    for (int64_t p; (p = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      fn(p);
      ++ran;
    }
    if (ran == 0) return;
    std::lock_guard<std::mutex> lock(mu);
    done += ran;
    if (done == n) cv.notify_all();
  }
};

}  // namespace detail

// Runs fn(p) for p in [0, pieces): on the calling thread alone when `pool` is null, there is
// one piece, or JAXSUBSET_NATIVE_THREADS=1; else also on up to (threads - 1) pool tasks.
// fn must be copyable and must not throw (kernels report errors through their results).
// `pool`: the handler's `Ctx<ffi::ThreadPool>()`.
template <typename F>
void for_pieces(xla::ffi::ThreadPool* pool, int64_t pieces, const F& fn) {
  if (pieces <= 0) return;
  const int64_t threads = pool != nullptr ? thread_limit(pool->num_threads()) : 1;
  if (threads <= 1 || pieces == 1) {
    for (int64_t p = 0; p < pieces; ++p) fn(p);
    return;
  }
  auto state = std::make_shared<detail::Pieces<F>>(pieces, fn);
  const int64_t helpers = (threads < pieces ? threads : pieces) - 1;
  for (int64_t t = 0; t < helpers; ++t) {
    pool->Schedule([state] { state->work(); });
  }
  state->work();
  std::unique_lock<std::mutex> lock(state->mu);
  state->cv.wait(lock, [&] { return state->done == state->n; });
}

}  // namespace jaxsubset
