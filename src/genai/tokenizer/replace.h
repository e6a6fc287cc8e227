// Literal or regex replacement shared by the Replace normalizer and the Replace decoder.
#pragma once
#include <memory>
#include <string>

#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"
#include "genai/tokenizer/regex.h"

namespace ogx::tok {

// Shared by the Replace normalizer and the Replace decoder.
struct Replacer {
  Pattern pattern;
  std::string content;
  std::unique_ptr<Regex> re;
  Replacer(Pattern p, std::string c, const std::string& where) : pattern(std::move(p)), content(std::move(c)) {
    if (pattern.is_regex) re = std::make_unique<Regex>(pattern.text, where);
  }
  std::string apply(const std::string& s) const {
    std::string out;
    if (!re) {
      if (pattern.text.empty()) return s;
      size_t pos = 0;
      for (;;) {
        size_t f = s.find(pattern.text, pos);
        if (f == std::string::npos) break;
        out.append(s, pos, f - pos);
        out += content;
        pos = f + pattern.text.size();
      }
      if (pos == 0) return s;
      out.append(s, pos, std::string::npos);
      return out;
    }
    std::vector<std::pair<size_t, size_t>> m;
    re->find_all(s, m);
    size_t pos = 0;
    for (auto [b, e] : m) {
      out.append(s, pos, b - pos);
      out += content;
      pos = e;
    }
    out.append(s, pos, std::string::npos);
    return out;
  }
};

inline std::unique_ptr<Replacer> make_replacer(const json& j, const std::string& path) {
  return std::make_unique<Replacer>(jpattern(j, "pattern", path), jstr(j, "content", path), jpath(path, "pattern"));
}

}  // namespace ogx::tok
