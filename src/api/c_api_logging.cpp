// C API: logging. Log messages from the whole library go to one place: a file (SetLogString("filename")), else a
// callback (either form), else stderr. The ort_genai_c.h log options choose which generation events are logged.
#include <atomic>
#include <cstdio>
#include <mutex>

#include "api/handles.h"
#include "api/log_options.h"
#include "common/log.h"

using namespace ogx::api;

namespace {

struct LogState {
  std::mutex mu;
  void (*plain)(const char*, size_t) = nullptr;  // OgxSetLogCallback
  OgxLogCallback with_level = nullptr;           // OgxSetLogCallbackWithLevel
  void* user_data = nullptr;
  std::FILE* file = nullptr;  // SetLogString("filename")
  std::string filename;
};

LogState& state() {
  static LogState s;
  return s;
}

constexpr const char* kTopicNames[] = {"generate_next_token", "append_next_tokens", "model_input_values",
                                       "model_output_values", "model_logits", "hit_eos"};
constexpr int kTopics = sizeof(kTopicNames) / sizeof(kTopicNames[0]);
std::atomic<bool> g_enabled{true};
std::atomic<bool> g_topics[kTopics];
// Options ort_genai_c.h documents that ogx accepts without effect (its log has no ANSI tags, it loads no ORT).
constexpr const char* kAcceptedBools[] = {"ansi_tags", "warning", "ort_lib", "value_stats"};

const char* level_tag(ogx::LogLevel l) {
  return l == ogx::LogLevel::error ? "error" : l == ogx::LogLevel::warning ? "warning" : "info";
}

// Installs the engine's sink for the current state (under state().mu).
void install_sink(LogState& s) {
  if (!s.file && !s.plain && !s.with_level) {
    ogx::set_log_sink(nullptr);
    return;
  }
  // The sink holds its own copy of the destinations: the state may change while another thread logs.
  std::FILE* file = s.file;
  auto plain = s.plain;
  auto with_level = s.with_level;
  void* user_data = s.user_data;
  ogx::set_log_sink([=](ogx::LogLevel level, const std::string& msg) {
    if (file) {
      std::fprintf(file, "ogx %s: %s\n", level_tag(level), msg.c_str());
      std::fflush(file);
    } else if (with_level) {
      with_level(user_data, static_cast<OgxLogLevel>(static_cast<int>(level)), msg.c_str());
    } else if (plain) {
      std::string line = std::string("ogx ") + level_tag(level) + ": " + msg;
      plain(line.c_str(), line.size());
    }
  });
}

std::string known_options() {
  std::string out = "enabled";
  for (const char* n : kTopicNames) out += std::string(", ") + n;
  for (const char* n : kAcceptedBools) out += std::string(", ") + n;
  return out;
}

}  // namespace

namespace ogx::api {

bool log_topic_on(LogTopic topic) { return g_enabled.load() && g_topics[static_cast<int>(topic)].load(); }

void log_topic(LogTopic topic, const std::string& message) {
  if (log_topic_on(topic)) ogx::log_info(std::string(kTopicNames[static_cast<int>(topic)]) + ": " + message);
}

}  // namespace ogx::api

extern "C" {

OgxResult* OgxSetLogCallback(void (*callback)(const char* string, size_t length)) {
  return guard([&] {
    LogState& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    s.plain = callback;
    s.with_level = nullptr;
    s.user_data = nullptr;
    install_sink(s);
  });
}

OgxResult* OgxSetLogCallbackWithLevel(OgxLogCallback callback, void* user_data) {
  return guard([&] {
    LogState& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    s.with_level = callback;
    s.user_data = callback ? user_data : nullptr;
    s.plain = nullptr;
    install_sink(s);
  });
}

OgxResult* OgxSetLogLevel(OgxLogLevel level) {
  return guard([&] {
    int l = enum_bits(level);
    if (l < OgxLogLevel_Info || l > OgxLogLevel_Error)
      fail(OgxErrorCode_InvalidArgument, "OgxSetLogLevel: level " + std::to_string(l) +
                                             " is not one of OgxLogLevel_Info (0), _Warning (1), _Error (2)");
    ogx::set_log_level(static_cast<ogx::LogLevel>(l));
  });
}

OgxResult* OgxSetLogBool(const char* name, bool value) {
  return guard([&] {
    need(name, "OgxSetLogBool", "name");
    std::string n = name;
    if (n == "enabled") {
      g_enabled.store(value);
      return;
    }
    for (int i = 0; i < kTopics; i++)
      if (n == kTopicNames[i]) {
        g_topics[i].store(value);
        // The events are info messages: asking for them lowers the log level to info (OgxSetLogLevel raises it).
        if (value) ogx::set_log_level(ogx::LogLevel::info);
        return;
      }
    for (const char* a : kAcceptedBools)
      if (n == a) return;
    fail(OgxErrorCode_InvalidArgument, "OgxSetLogBool: unknown log option '" + n + "' (known: " + known_options() + ")");
  });
}

OgxResult* OgxSetLogString(const char* name, const char* value) {
  return guard([&] {
    need(name, "OgxSetLogString", "name");
    need(value, "OgxSetLogString", "value");
    if (std::string(name) != "filename")
      fail(OgxErrorCode_InvalidArgument, std::string("OgxSetLogString: unknown log option '") + name +
                                             "' (known: filename)");
    LogState& s = state();
    std::lock_guard<std::mutex> lk(s.mu);
    std::FILE* next = nullptr;
    if (*value) {
      next = std::fopen(value, "a");
      if (!next)
        fail(OgxErrorCode_Runtime, std::string("OgxSetLogString: cannot open log file '") + value + "' for writing");
    }
    std::FILE* old = s.file;
    s.file = next;
    s.filename = value;
    install_sink(s);  // the engine's sink is swapped under its log lock: no thread still writes to `old`
    if (old) std::fclose(old);
  });
}

}  // extern "C"
