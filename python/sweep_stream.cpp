// trainsim._core.Sweep: a sweep run on the worker threads of `trainsim sweep`
// (sweep::run_in_order), its records handed to Python one at a time, in point order, as they
// finish. The workers never touch Python: they fill a bounded queue, and next() waits on it
// with the GIL released.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include <pybind11/stl.h>

#include "python/module.hpp"
#include "sim/exec/allocator_memo.hpp"
#include "sim/sweep/output.hpp"
#include "sim/sweep/runner.hpp"

namespace py = pybind11;

namespace trainsim::python {

namespace {

// Records waiting for Python at most; a full queue holds the workers back.
constexpr std::size_t kQueued = 256;

class SweepStream {
 public:
  // `csv`: each record is the point's CSV row (header()), else its JSON Lines record.
  SweepStream(const Source& src, int jobs, bool csv) : csv_(csv) {
    {
      py::gil_scoped_release release;
      spec_ = src.text ? sweep::load_sweep_text(*src.text, src.name) : sweep::load_sweep(src.name);
      points_ = sweep::expand(spec_);
      if (!points_.empty()) sweep::check_axis_keys(spec_, points_.front());
    }
    if (jobs < 0) throw py::value_error("sweep: jobs must be >= 0 (0 = one per hardware thread)");
    const int threads = sweep::worker_threads(jobs, points_.size());
    runner_ = std::thread([this, threads] { run(threads); });
  }
  SweepStream(const SweepStream&) = delete;
  SweepStream& operator=(const SweepStream&) = delete;
  ~SweepStream() { close(); }

  std::string header() const { return sweep::csv_header(spec_); }
  std::size_t points() const { return points_.size(); }

  // The next record, or nullopt when every point is done. A worker's error is raised here.
  std::optional<std::string> next() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!queue_.empty()) {
        std::string r = std::move(queue_.front());
        queue_.pop_front();
        space_.notify_one();
        return r;
      }
      if (done_) {
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
        return std::nullopt;
      }
      {
        // Waits a tenth of a second at a time so that Ctrl-C reaches Python.
        lock.unlock();
        {
          py::gil_scoped_release release;
          std::unique_lock<std::mutex> wait(mu_);
          ready_.wait_for(wait, std::chrono::milliseconds(100), [&] { return !queue_.empty() || done_; });
        }
        if (PyErr_CheckSignals() != 0) {
          close();
          throw py::error_already_set();
        }
        lock.lock();
      }
    }
  }

  // Stops the workers (points in flight finish) and waits for them.
  void close() {
    stop_.store(true);
    {
      std::lock_guard<std::mutex> lock(mu_);
      space_.notify_all();
    }
    if (runner_.joinable()) {
      py::gil_scoped_release release;
      runner_.join();
    }
  }

 private:
  void run(int threads) {
    try {
      sweep::run_in_order<std::string>(
          points_.size(), threads,
          [this](std::size_t i) {
            const sweep::Point& p = points_[i];
            const sweep::PointResult r = sweep::run_point(spec_, p, &memo_);
            return csv_ ? sweep::csv_row(spec_, p, r) : sweep::jsonl_line(spec_, p, r);
          },
          [this](std::size_t, std::string&& record) {
            std::unique_lock<std::mutex> lock(mu_);
            space_.wait(lock, [&] { return queue_.size() < kQueued || stop_.load(); });
            if (stop_.load()) return;
            queue_.push_back(std::move(record));
            ready_.notify_one();
          },
          &stop_);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    ready_.notify_all();
  }

  bool csv_;
  sweep::SweepSpec spec_;
  std::vector<sweep::Point> points_;
  exec::AllocatorMemo memo_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<std::string> queue_;
  std::atomic<bool> stop_{false};
  bool done_ = false;
  std::exception_ptr error_;
  std::thread runner_;  // last: started once everything above is built
};

}  // namespace

void bind_sweep(py::module_& m) {
  py::class_<SweepStream>(m, "Sweep")
      .def(py::init<const Source&, int, bool>(), py::arg("source"), py::arg("jobs"), py::arg("csv"))
      .def_property_readonly("header", &SweepStream::header)
      .def_property_readonly("points", &SweepStream::points)
      .def("next", &SweepStream::next)
      .def("close", &SweepStream::close);
}

}  // namespace trainsim::python
