#include "serve/stop_matcher.h"

#include <algorithm>

namespace ogx::serve {

namespace {

// The length of the longest suffix of `text` that is a proper prefix of some stop string.
size_t partial_stop_length(const std::string& text, const std::vector<std::string>& stops) {
  size_t best = 0;
  for (const std::string& s : stops)
    for (size_t n = std::min(text.size(), s.size() - 1); n > best; n--)
      if (text.compare(text.size() - n, n, s, 0, n) == 0) {
        best = n;
        break;
      }
  return best;
}

// Moves a cut back to the start of a UTF-8 character, so released text never ends inside one.
size_t utf8_boundary(const std::string& text, size_t cut) {
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) cut--;
  return cut;
}

}  // namespace

std::string StopMatcher::feed(const std::string& text) {
  if (stopped_) return {};
  held_ += text;
  // The stop string that completes first in the text (the earliest end; at equal ends the longest), so the result
  // does not depend on how the text was split into pieces.
  size_t first = std::string::npos, end = std::string::npos;
  for (const std::string& s : stops_) {
    size_t at = held_.find(s);
    if (at != std::string::npos && (at + s.size() < end || (at + s.size() == end && at < first))) {
      first = at;
      end = at + s.size();
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  size_t cut = utf8_boundary(held_, held_.size() - partial_stop_length(held_, stops_));
  std::string out = held_.substr(0, cut);
  held_.erase(0, cut);
  return out;
}

std::string StopMatcher::flush() {
  std::string out;
  if (!stopped_) out.swap(held_);
  held_.clear();
  return out;
}

}  // namespace ogx::serve
