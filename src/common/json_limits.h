// Limits for JSON text read from files (genai_config.json, tokenizer.json, safetensors headers, chat messages):
// a pre-scan that rejects nesting deeper than a limit before a parser builds a value, since nlohmann's value
// operations (copy, dump, compare) recurse once per level and a 100,000-deep document would overflow the stack;
// and a one-line summary of a value for error messages that does not recurse.
#pragma once
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

namespace ogx {

// The deepest nesting any file ogx reads needs is under 20; 256 leaves room for unusual but honest files.
inline constexpr int kMaxJsonDepth = 256;

// Throws "<what>: JSON nested deeper than <max_depth> levels (at byte N)" when arrays/objects nest deeper than
// max_depth anywhere in text; strings (with escapes) are skipped. Linear, no recursion, no allocation.
void check_json_depth(std::string_view text, const std::string& what, int max_depth = kMaxJsonDepth);

// Describes a JSON text for an error message without recursing: the text itself when it is short, else its first
// bytes and its length.
std::string json_excerpt(std::string_view dumped_or_text, size_t max_chars = 80);

// An nlohmann exception's message without its "[json.exception.parse_error.101] " prefix.
std::string json_error_text(const std::exception& e);

}  // namespace ogx
