// The terminal view of common/progress.h (for the command-line front ends): while alive, draws each reported task as one line on stderr, redrawn in
// place at most 10 times a second: task, bar, done / total, rate and ETA. A task that ends within 0.3 s is never
// drawn. Silent (installs nothing) when stderr is not a terminal or when quiet (--quiet).
#pragma once
#include <chrono>
#include <string>

#include "common/progress.h"

namespace ogx::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool quiet);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // The line drawn for an event `elapsed_s` seconds into its task (no terminal control characters); for tests.
  static std::string format(const progress::Event& e, double elapsed_s, int width = 80);

 private:
  void on_event(const progress::Event& e);

  using Clock = std::chrono::steady_clock;
  bool active_ = false;
  std::string task_;            // the task being drawn
  Clock::time_point start_, last_draw_;
  bool drawn_ = false;          // the current task's line is on the screen
};

}  // namespace ogx::cli
