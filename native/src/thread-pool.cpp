#include "tandem/thread-pool.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define TANDEM_PAUSE() _mm_pause()
#else
#define TANDEM_PAUSE() std::this_thread::yield()
#endif

namespace tandem {

namespace {
constexpr int kSpinIterations = 1 << 14;  // ~0.1–0.5 ms of pause instructions

void range_of(int64_t n, int parts, int index, int64_t* b, int64_t* e) {
  *b = n * index / parts;
  *e = n * (index + 1) / parts;
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_part(int index) {
  int64_t b, e;
  range_of(job_n_, size(), index, &b, &e);
  if (b >= e) return;
  try {
    (*job_)(b, e, index);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    bool ready = false;
    for (int i = 0; i < kSpinIterations && !ready; ++i) {
      ready = generation_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_relaxed);
      if (!ready) TANDEM_PAUSE();
    }
    if (!ready) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_.fetch_add(1);
      start_cv_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      sleeping_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    run_part(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    fn(0, n, 0);
    return;
  }
  job_ = &fn;
  job_n_ = n;
  error_ = nullptr;
  pending_.store(int(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1);  // publishes job_ and job_n_ (seq_cst)
  if (sleeping_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    start_cv_.notify_all();
  }
  run_part(0);
  for (int i = 0; i < kSpinIterations && pending_.load(std::memory_order_acquire) != 0; ++i) TANDEM_PAUSE();
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_.load() == 0; });
  }
  job_ = nullptr;
  std::exception_ptr err;
  {
    std::lock_guard<std::mutex> lock(mu_);
    err = error_;
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace tandem
