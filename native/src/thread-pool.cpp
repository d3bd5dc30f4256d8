#include "tandem/thread-pool.h"

namespace tandem {

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

static void range_of(int64_t n, int parts, int index, int64_t* b, int64_t* e) {
  *b = n * index / parts;
  *e = n * (index + 1) / parts;
}

void ThreadPool::worker_loop(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t, int)>* job;
    int64_t n;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
    }
    int64_t b, e;
    range_of(n, size(), index, &b, &e);
    std::exception_ptr err;
    if (b < e) {
      try {
        (*job)(b, e, index);
      } catch (...) {
        err = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (err && !error_) error_ = err;
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1) {
    fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    job_n_ = n;
    pending_ = int(workers_.size());
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  int64_t b, e;
  range_of(n, size(), 0, &b, &e);
  std::exception_ptr err;
  try {
    if (b < e) fn(b, e, 0);
  } catch (...) {
    err = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  if (!err) err = error_;
  job_ = nullptr;
  if (err) std::rethrow_exception(err);
}

}  // namespace tandem
