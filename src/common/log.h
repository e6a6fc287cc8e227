// Warnings and info messages. Default sink is stderr; the C API can install a callback.
#pragma once
#include <functional>
#include <string>

namespace ogx {

enum class LogLevel { info = 0, warning = 1, error = 2 };
using LogSink = std::function<void(LogLevel, const std::string&)>;

void set_log_sink(LogSink sink);  // null restores stderr
void set_log_level(LogLevel min_level);
void log(LogLevel level, const std::string& msg);
inline void log_warning(const std::string& msg) { log(LogLevel::warning, msg); }
inline void log_info(const std::string& msg) { log(LogLevel::info, msg); }

}  // namespace ogx
