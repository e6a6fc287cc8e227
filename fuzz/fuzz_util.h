// Shared helpers of the libFuzzer targets: split one input into parts, and run a call where an ogx::Error (a clean
// refusal of bad input) is the expected outcome. Anything else — a crash, a sanitizer report, another exception
// type, a hang past libFuzzer's -timeout, memory past -rss_limit_mb — is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace ogx::fuzz {

// Splits data at each occurrence of sep (at most max_parts parts; the last one takes the rest).
inline std::vector<std::string> split(const uint8_t* data, size_t size, std::string_view sep, size_t max_parts) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  while (parts.size() + 1 < max_parts) {
    size_t p = s.find(sep);
    if (p == std::string_view::npos) break;
    parts.emplace_back(s.substr(0, p));
    s.remove_prefix(p + sep.size());
  }
  parts.emplace_back(s);
  return parts;
}

template <typename F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const ogx::Error&) {
    // a clean refusal
  }
}

}  // namespace ogx::fuzz
