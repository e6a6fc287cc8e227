// UTF-8 helpers and Unicode properties (ICU) used by the tokenizer pipeline.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace ogx::tok {

// Replaces every invalid UTF-8 sequence by `replacement` (U+FFFD; "" drops it), one per maximal invalid subpart, as
// Rust's String::from_utf8_lossy and the Unicode recommendation. Valid input is returned unchanged.
std::string sanitize_utf8(std::string_view s, std::string_view replacement = "\xEF\xBF\xBD");
bool is_valid_utf8(std::string_view s);
// Length of the trailing bytes of s that form an incomplete (but so far valid) UTF-8 sequence.
size_t incomplete_utf8_tail(std::string_view s);

// Decodes one code point of valid UTF-8 at s[i], advancing i.
inline char32_t next_cp(std::string_view s, size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) { ++i; return c; }
  int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  char32_t cp = c & (0x3F >> n);
  ++i;
  for (int k = 0; k < n && i < s.size(); ++k, ++i) cp = (cp << 6) | (static_cast<unsigned char>(s[i]) & 0x3F);
  return cp;
}
inline size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }
void append_utf8(std::string& out, char32_t cp);

enum class NormForm { NFC, NFD, NFKC, NFKD };
std::string unicode_normalize(std::string_view s, NormForm form);
std::string unicode_lowercase(std::string_view s);

bool is_whitespace(char32_t c);   // Unicode White_Space (Rust char::is_whitespace)
bool is_punctuation(char32_t c);  // ASCII punctuation or general category P*
bool is_control(char32_t c);      // general category Cc/Cf/Cn/Co (BERT's definition)
bool is_nonspacing_mark(char32_t c);
bool is_cjk(char32_t c);
bool is_alnum(char32_t c);        // letters, marks, numbers, '_' (regex \w)
bool is_digit(char32_t c);        // general category Nd

// GPT-2 byte <-> printable character mapping.
const std::array<std::string, 256>& byte_to_chars();
int char_to_byte(char32_t c);  // -1 if c is not in the mapping

}  // namespace ogx::tok
