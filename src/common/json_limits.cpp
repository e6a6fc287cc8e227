#include "common/json_limits.h"

#include "common/error.h"

namespace ogx {

void check_json_depth(std::string_view text, const std::string& what, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); i++) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') i++;  // skips the escaped character ("\"" does not end the string)
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw_error(what, ": JSON nested deeper than ", max_depth, " levels (at byte ", i, ")");
    } else if (c == ']' || c == '}') {
      depth--;
    }
  }
}

std::string json_excerpt(std::string_view s, size_t max_chars) {
  if (s.size() <= max_chars) return std::string(s);
  return std::string(s.substr(0, max_chars)) + "... (" + std::to_string(s.size()) + " characters)";
}

std::string json_error_text(const std::exception& e) {
  std::string_view m = e.what();
  if (m.substr(0, 16) == "[json.exception.") {
    const size_t close = m.find("] ");
    if (close != std::string_view::npos) m.remove_prefix(close + 2);
  }
  return std::string(m);
}

}  // namespace ogx
