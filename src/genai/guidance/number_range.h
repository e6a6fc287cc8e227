// Regexes for JSON numbers in a range (JSON schema minimum / maximum / exclusive*), so the lexer itself keeps a
// number inside its bounds digit by digit. Digit counts are bounded (kMaxIntDigits before the point, kMaxFracDigits
// after, 2 exponent digits: a double) so that an unconstrained model cannot emit digits forever; bounded numbers have
// no exponent.
#pragma once
#include <optional>
#include <string>

namespace ogx::genai::guidance {

constexpr int kMaxIntDigits = 18;
constexpr int kMaxFracDigits = 15;

struct Bound {
  double value;
  bool exclusive = false;
};

// Integers in [lo, hi] (absent: unbounded on that side; bounds beyond +-1e18 count as unbounded). Throws when the
// range is empty.
std::string integer_range_regex(std::optional<Bound> lo, std::optional<Bound> hi);
// Decimal numbers (optional fraction, no exponent) in the range; unbounded both sides: the JSON number syntax
// with an exponent.
std::string number_range_regex(std::optional<Bound> lo, std::optional<Bound> hi);

}  // namespace ogx::genai::guidance
