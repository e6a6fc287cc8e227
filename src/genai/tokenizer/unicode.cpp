#include "genai/tokenizer/unicode.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>

#include "common/error.h"

namespace ogx::tok {

namespace {
// Returns the length of the valid sequence at s[i], or 0 with `bad` = bytes of the maximal invalid subpart.
size_t valid_seq(std::string_view s, size_t i, size_t& bad) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  bad = 1;
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) { n = 3; lo = 0xA0; }
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) { n = 3; hi = 0x9F; }
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) { n = 4; lo = 0x90; }
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) { n = 4; hi = 0x8F; }
  else return 0;
  for (size_t k = 1; k < n; ++k) {
    if (i + k >= s.size()) { bad = k; return 0; }
    unsigned char d = static_cast<unsigned char>(s[i + k]);
    unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (d < l || d > h) { bad = k; return 0; }
  }
  return n;
}
}  // namespace

bool is_valid_utf8(std::string_view s) {
  size_t bad;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) { ++i; continue; }
    size_t n = valid_seq(s, i, bad);
    if (!n) return false;
    i += n;
  }
  return true;
}

std::string sanitize_utf8(std::string_view s, std::string_view replacement) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  size_t bad;
  for (size_t i = 0; i < s.size();) {
    size_t n = valid_seq(s, i, bad);
    if (n) { out.append(s.substr(i, n)); i += n; }
    else { out += replacement; i += bad; }
  }
  return out;
}

size_t incomplete_utf8_tail(std::string_view s) {
  for (size_t k = 1; k <= 3 && k <= s.size(); ++k) {
    size_t i = s.size() - k;
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: look further back
    if (c < 0xC2 || c > 0xF4) return 0;  // no character starts with it: invalid, not incomplete
    size_t bad;
    if (valid_seq(s, i, bad) == 0 && bad == k && utf8_len(c) > k) return k;
    return 0;
  }
  return 0;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) out += static_cast<char>(cp);
  else if (cp < 0x800) { out += static_cast<char>(0xC0 | (cp >> 6)); out += static_cast<char>(0x80 | (cp & 0x3F)); }
  else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12)); out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18)); out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)); out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string unicode_normalize(std::string_view s, NormForm form) {
  bool ascii = true;
  for (char c : s) if (static_cast<unsigned char>(c) >= 0x80) { ascii = false; break; }
  if (ascii) return std::string(s);
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (form) {
    case NormForm::NFC: n = icu::Normalizer2::getNFCInstance(err); break;
    case NormForm::NFD: n = icu::Normalizer2::getNFDInstance(err); break;
    case NormForm::NFKC: n = icu::Normalizer2::getNFKCInstance(err); break;
    case NormForm::NFKD: n = icu::Normalizer2::getNFKDInstance(err); break;
  }
  if (U_FAILURE(err)) throw_error("ICU normalizer unavailable: ", u_errorName(err));
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), static_cast<int32_t>(s.size())));
  icu::UnicodeString r = n->normalize(u, err);
  if (U_FAILURE(err)) throw_error("ICU normalization failed: ", u_errorName(err));
  std::string out;
  r.toUTF8String(out);
  return out;
}

std::string unicode_lowercase(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { out += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); ++i; continue; }
    char32_t cp = next_cp(s, i);
    // Full per-character mapping (as Rust char::to_lowercase), no context.
    UChar src[2], dst[8];
    int32_t sl = 0;
    U16_APPEND_UNSAFE(src, sl, cp);
    UErrorCode err = U_ZERO_ERROR;
    int32_t dl = u_strToLower(dst, 8, src, sl, "", &err);
    if (U_FAILURE(err)) { append_utf8(out, cp); continue; }
    for (int32_t k = 0; k < dl;) { UChar32 o; U16_NEXT(dst, k, dl, o); append_utf8(out, static_cast<char32_t>(o)); }
  }
  return out;
}

bool is_whitespace(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }
bool is_punctuation(char32_t c) {
  if (c < 0x80) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return u_ispunct(static_cast<UChar32>(c));
}
bool is_control(char32_t c) {
  int8_t t = u_charType(static_cast<UChar32>(c));
  return t == U_CONTROL_CHAR || t == U_FORMAT_CHAR || t == U_UNASSIGNED || t == U_PRIVATE_USE_CHAR;
}
bool is_nonspacing_mark(char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK; }
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}
bool is_alnum(char32_t c) {
  if (c == '_') return true;
  UChar32 u = static_cast<UChar32>(c);
  return u_isalpha(u) || u_isdigit(u) || (U_GET_GC_MASK(u) & (U_GC_M_MASK | U_GC_N_MASK | U_GC_PC_MASK));
}
bool is_digit(char32_t c) { return u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER; }

const std::array<std::string, 256>& byte_to_chars() {
  static const std::array<std::string, 256> table = [] {
    std::array<std::string, 256> t;
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
      append_utf8(t[b], cp);
    }
    return t;
  }();
  return table;
}

int char_to_byte(char32_t c) {
  static const std::array<int, 512> inv = [] {
    std::array<int, 512> t;
    t.fill(-1);
    const auto& fwd = byte_to_chars();
    for (int b = 0; b < 256; ++b) {
      size_t i = 0;
      t[next_cp(fwd[b], i)] = b;
    }
    return t;
  }();
  return c < 512 ? inv[c] : -1;
}

}  // namespace ogx::tok
