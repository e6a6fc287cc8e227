#include "common/progress.h"

#include <atomic>
#include <mutex>

namespace ogx::progress {
namespace {

std::mutex g_mutex;
Sink g_sink;
std::atomic<bool> g_installed{false};

}  // namespace

void set_sink(Sink sink) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_sink = std::move(sink);
  g_installed = (bool)g_sink;
}

void report(std::string_view task, uint64_t done, uint64_t total, Unit unit) {
  if (!g_installed.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sink) g_sink(Event{task, done, total, unit});
}

}  // namespace ogx::progress
