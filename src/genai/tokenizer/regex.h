// PCRE2 (UTF + UCP, JIT when available) regex used by Split / ByteLevel pre-tokenizers and Replace.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ogx::tok {

class Regex {
 public:
  // Throws ogx::Error naming `where` when the pattern does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;
  // All non-overlapping matches [begin, end) in valid UTF-8 text, left to right.
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
    for_each_match(text, [&](size_t b, size_t e) { out.emplace_back(b, e); });
  }
  // Calls f(begin, end) for every non-empty match, left to right.
  template <typename F>
  void for_each_match(std::string_view text, F&& f) const {
    size_t pos = 0, b, e;
    while (find(text, pos, b, e)) {
      f(b, e);
      pos = e;
    }
  }
  // First non-empty match at or after `start`; false if none.
  bool find(std::string_view text, size_t start, size_t& b, size_t& e) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string regex_escape(std::string_view literal);

}  // namespace ogx::tok
