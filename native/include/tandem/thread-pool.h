// A fixed pool of worker threads for data-parallel loops. One owner thread calls
// parallel_for at a time (the engine serialises its calls); the caller takes part.
// Workers spin briefly between jobs before sleeping: a decode step issues ~150 short
// parallel loops, and a futex wake-up per loop would cost more than the loop itself.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tandem {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }

  // Calls fn(begin, end, worker) over [0, n) split into at most size() contiguous ranges;
  // returns when all are done. Exceptions in fn are rethrown in the caller (the first one).
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn);

 private:
  void worker_loop(int index);
  void run_part(int index);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int64_t, int64_t, int)>* job_ = nullptr;
  int64_t job_n_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr error_;
};

}  // namespace tandem
