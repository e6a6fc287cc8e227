#include "common/log.h"

#include <cstdio>
#include <mutex>

namespace ogx {
namespace {
std::mutex g_mu;
LogSink g_sink;
LogLevel g_level = LogLevel::warning;
}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_sink = std::move(sink);
}

void set_log_level(LogLevel l) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_level = l;
}

void log(LogLevel level, const std::string& msg) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (level < g_level) return;
  if (g_sink) {
    g_sink(level, msg);
    return;
  }
  const char* tag = level == LogLevel::error ? "error" : level == LogLevel::warning ? "warning" : "info";
  std::fprintf(stderr, "ogx %s: %s\n", tag, msg.c_str());
}

}  // namespace ogx
