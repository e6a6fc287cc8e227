// Stop strings on decoded text (OpenAI's `stop`): text is released as it streams, except a tail that could be the
// start of a stop string, which waits for the next text. When a stop string appears, the text before it is the
// last released and the stop string itself is never returned. Of several stop strings, the one that completes first
// in the text counts (the earliest end; at equal ends the longest), as a server checking after each token finds it.
#pragma once
#include <string>
#include <vector>

namespace ogx::serve {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops = {}) : stops_(std::move(stops)) {}
  // Adds decoded text; returns the text now safe to release. `stopped` becomes true when a stop string appeared
  // (after which nothing more is accepted).
  std::string feed(const std::string& text);
  // The held-back tail, at the end of generation (nothing after a stop).
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace ogx::serve
