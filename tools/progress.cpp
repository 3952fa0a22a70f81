#include "tools/progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace trainsim::tools {

bool progress_wanted(bool quiet) { return !quiet && isatty(STDERR_FILENO) != 0; }

Progress::Progress(std::string unit, std::size_t total, bool on, std::size_t done)
    : unit_(std::move(unit)), on_(on), total_(total), done_(done), start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { end(); }

void Progress::tick(int n) {
  done_ += static_cast<std::size_t>(n);
  ran_ += static_cast<std::size_t>(n);
  const auto now = std::chrono::steady_clock::now();
  if (!on_ || (now - last_ < std::chrono::milliseconds(100) && (total_ == 0 || done_ < total_))) return;
  last_ = now;
  draw(now);
}

void Progress::draw(std::chrono::steady_clock::time_point now) {
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? static_cast<double>(ran_) / secs : 0;
  if (total_ == 0) {
    std::fprintf(stderr, "\r%zu %s  %.1f s ", done_, unit_.c_str(), secs);
    return;
  }
  const int width = 30;
  const int filled = static_cast<int>(width * std::min(done_, total_) / total_);
  std::fprintf(stderr, "\r[%-*s] %zu/%zu  %.1f %s/s  ETA %.0f s ", width, std::string(filled, '#').c_str(),
               done_, total_, rate, unit_.c_str(),
               rate > 0 && done_ < total_ ? static_cast<double>(total_ - done_) / rate : 0.0);
}

void Progress::end() {
  if (!on_ || ended_) return;
  ended_ = true;
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - start_).count();
  draw(now);
  std::fprintf(stderr, "\nran %zu %s in %.1f s (%.1f %s/s)\n", ran_, unit_.c_str(), secs,
               secs > 0 ? static_cast<double>(ran_) / secs : 0.0, unit_.c_str());
}

std::function<void(int)> Progress::callback() {
  return [this](int n) { tick(n); };
}

}  // namespace trainsim::tools
