#include "common/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace ogx::cli {
namespace {

std::string amount(double v, progress::Unit unit) {
  char buf[32];
  if (unit == progress::Unit::items) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (v >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2f GB", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f MB", v / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f kB", v / 1e3);
  }
  return buf;
}

std::string duration(double s) {
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%dm%02ds", (int)(s / 60), (int)s % 60);
  else std::snprintf(buf, sizeof buf, "%.0fs", s);
  return buf;
}

}  // namespace

ProgressBar::ProgressBar(bool quiet) {
  if (quiet || !isatty(STDERR_FILENO)) return;
  active_ = true;
  progress::set_sink([this](const progress::Event& e) { on_event(e); });
}

ProgressBar::~ProgressBar() {
  if (!active_) return;
  progress::set_sink(nullptr);
  if (drawn_) std::fputs("\n", stderr);
}

std::string ProgressBar::format(const progress::Event& e, double elapsed_s, int width) {
  const double total = (double)std::max<uint64_t>(e.total, 1), done = (double)std::min(e.done, e.total);
  const double frac = done / total;
  const double rate = elapsed_s > 0 ? done / elapsed_s : 0;
  std::string tail = " " + amount(done, e.unit) + " / " + amount((double)e.total, e.unit);
  if (e.unit == progress::Unit::bytes && rate > 0) tail += ", " + amount(rate, e.unit) + "/s";
  if (e.done >= e.total) tail += ", " + duration(elapsed_s);
  else if (rate > 0) tail += ", ETA " + duration((total - done) / rate);
  std::string head = std::string(e.task) + " ";
  const int bar = std::clamp(width - (int)head.size() - 2 - 40, 10, 24);  // fixed per task: the tail varies
  int filled = (int)(frac * bar);
  return head + "[" + std::string((size_t)filled, '#') + std::string((size_t)(bar - filled), '.') + "]" + tail;
}

void ProgressBar::on_event(const progress::Event& e) {
  const auto now = Clock::now();
  if (e.task != task_) {  // a new task: the previous one's line stays as it was last drawn
    if (drawn_) std::fputs("\n", stderr);
    task_ = std::string(e.task);
    start_ = now;
    drawn_ = false;
  }
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const bool finished = e.done >= e.total;
  if (!drawn_ && elapsed < 0.3) return;  // short work shows nothing
  if (!finished && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  std::fprintf(stderr, "\r\033[K%s", format(e, elapsed).c_str());
  std::fflush(stderr);
  last_draw_ = now;
  drawn_ = true;
  if (finished) {
    std::fputs("\n", stderr);
    drawn_ = false;
    task_.clear();
  }
}

}  // namespace ogx::cli
