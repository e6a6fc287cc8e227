// StopMatcher: text streamed in random pieces gives the same result as the whole text, the stop string and what
// follows it never come out, and held-back text is only a possible start of a stop string.
#include <gtest/gtest.h>

#include <random>

#include "serve/stop_matcher.h"

namespace ogx::serve {
namespace {

// The expected output: the text up to the stop string that completes first (all of it when none occurs).
std::string reference(const std::string& text, const std::vector<std::string>& stops, bool& stopped) {
  size_t first = std::string::npos, end = std::string::npos;
  for (auto& s : stops) {
    size_t at = text.find(s);
    if (at != std::string::npos && (at + s.size() < end || (at + s.size() == end && at < first))) {
      first = at;
      end = at + s.size();
    }
  }
  stopped = first != std::string::npos;
  return stopped ? text.substr(0, first) : text;
}

TEST(StopMatcher, RandomPiecesEqualWholeText) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab c\n\xC3\xA9";  // includes a 2-byte UTF-8 character
  for (int trial = 0; trial < 2000; trial++) {
    std::string text;
    size_t len = rng() % 40;
    for (size_t i = 0; i < len; i++) {
      size_t k = rng() % 6;
      text += k == 5 ? std::string("\xC3\xA9") : std::string(1, alphabet[k]);
    }
    std::vector<std::string> stops;
    for (int s = 0, n = 1 + rng() % 3; s < n; s++) {
      std::string st;
      for (size_t i = 0, l = 1 + rng() % 4; i < l; i++) st += alphabet[rng() % 5];
      stops.push_back(st);
    }
    StopMatcher m(stops);
    std::string out;
    size_t pos = 0;
    while (pos < text.size() && !m.stopped()) {
      size_t n = std::min(text.size() - pos, (size_t)(rng() % 5));
      out += m.feed(text.substr(pos, n));
      pos += n;
    }
    out += m.flush();
    bool stopped = false;
    std::string want = reference(text, stops, stopped);
    std::string all;
    for (auto& st : stops) all += "[" + st + "]";
    ASSERT_EQ(out, want) << "trial " << trial << " text [" << text << "] stops " << all;
    ASSERT_EQ(m.stopped(), stopped) << "trial " << trial;
  }
}

TEST(StopMatcher, HoldsBackOnlyAPossibleStart) {
  StopMatcher m({"###"});
  EXPECT_EQ(m.feed("hello #"), "hello ");
  EXPECT_EQ(m.feed("x"), "#x");
  EXPECT_EQ(m.feed("##"), "");
  EXPECT_EQ(m.feed("#tail"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, NoStopsPassesEverything) {
  StopMatcher m;
  EXPECT_EQ(m.feed("abc"), "abc");
  EXPECT_EQ(m.flush(), "");
}

}  // namespace
}  // namespace ogx::serve
