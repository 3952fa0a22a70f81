#pragma once
// Progress of long work (sweep, plan, fit, diagnose, compare) on standard error: a bar when the
// amount of work is known, else a running count. Shown only when standard error is a terminal
// and --quiet was not given, so piped and redirected runs print nothing extra; nothing of it
// reaches standard output, which stays the same from run to run.
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace trainsim::tools {

// True when progress should be drawn: standard error is a terminal and not `quiet`.
bool progress_wanted(bool quiet);

class Progress {
 public:
  // `unit` names what is counted ("points", "simulations", "rows"); `total` 0 when unknown;
  // `done` is work finished before this run (a resumed sweep).
  Progress(std::string unit, std::size_t total, bool on, std::size_t done = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void tick(int n = 1);  // `n` more finished; redrawn at most every 100 ms
  // The last line and what the run took; then the line is finished. Idempotent.
  void end();
  // A callback that ticks this progress, for the libraries' on_progress hooks.
  std::function<void(int)> callback();

 private:
  void draw(std::chrono::steady_clock::time_point now);
  std::string unit_;
  bool on_;
  bool ended_ = false;
  std::size_t total_, done_, ran_ = 0;
  std::chrono::steady_clock::time_point start_, last_{};
};

}  // namespace trainsim::tools
