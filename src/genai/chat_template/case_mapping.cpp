// Unicode case mapping with Python's str semantics, through ICU (root locale: language-independent full mappings,
// as Python's): upper / lower of whole strings (ß -> SS, İ -> i̇, Σ -> ς at a word's end), str.title (a character
// after a cased one is lowered, any other titlecased: ǆ -> ǅ), str.capitalize (Python >= 3.8: first character
// titlecased, the rest lowered), Jinja's `title` filter (words split at whitespace and -({[<, first character
// upper()ed, the rest lower()ed), and str.isupper / islower. Ill-formed UTF-8 passes through unchanged.
#include <unicode/ucasemap.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <memory>

#include "common/error.h"
#include "genai/chat_template/case_mapping.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {
namespace {

enum class Mapping { upper, lower, title };

// A root-locale UCaseMap; titlecasing maps the string's first character only (it is given one at a time).
UCaseMap* case_map() {
  static const std::unique_ptr<UCaseMap, void (*)(UCaseMap*)> map = [] {
    UErrorCode err = U_ZERO_ERROR;
    UCaseMap* m = ucasemap_open("", U_TITLECASE_WHOLE_STRING | U_TITLECASE_NO_BREAK_ADJUSTMENT, &err);
    if (U_FAILURE(err)) throw_error("ICU ucasemap_open failed: ", u_errorName(err));
    return std::unique_ptr<UCaseMap, void (*)(UCaseMap*)>(m, ucasemap_close);
  }();
  return map.get();
}

std::string map_utf8(Mapping how, const char* s, size_t n) {
  if (n == 0) return {};
  std::string out(n * 3 + 8, '\0');  // a full mapping grows a character to at most 3 (UTF-8: ~3x bytes)
  for (int attempt = 0; attempt < 2; attempt++) {
    UErrorCode err = U_ZERO_ERROR;
    int32_t len = 0;
    if (how == Mapping::upper) len = ucasemap_utf8ToUpper(case_map(), out.data(), (int32_t)out.size(), s, (int32_t)n, &err);
    else if (how == Mapping::lower) len = ucasemap_utf8ToLower(case_map(), out.data(), (int32_t)out.size(), s, (int32_t)n, &err);
    else len = ucasemap_utf8ToTitle(case_map(), out.data(), (int32_t)out.size(), s, (int32_t)n, &err);
    if (err == U_BUFFER_OVERFLOW_ERROR) {
      out.assign((size_t)len, '\0');
      continue;
    }
    if (U_FAILURE(err)) throw_error("ICU case mapping failed: ", u_errorName(err));
    out.resize((size_t)len);
    return out;
  }
  throw_error("ICU case mapping failed: the output kept growing");
}

// The string's code points with their byte offsets; an ill-formed byte is one "code point" of value -1.
struct CodePoints {
  std::vector<UChar32> c;
  std::vector<size_t> begin;  // [c.size() + 1]: byte offset of each, then the end
};

CodePoints code_points(const std::string& s) {
  CodePoints cp;
  int32_t i = 0, n = (int32_t)s.size();
  while (i < n) {
    cp.begin.push_back((size_t)i);
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    cp.c.push_back(c);
  }
  cp.begin.push_back(s.size());
  return cp;
}

bool cased(UChar32 c) { return c >= 0 && u_hasBinaryProperty(c, UCHAR_CASED); }
bool case_ignorable(UChar32 c) { return c >= 0 && u_hasBinaryProperty(c, UCHAR_CASE_IGNORABLE); }

// Python's lower_ucs4 for code point k of the string: Σ is ς in the Final_Sigma context (a cased letter before it
// and none after it, case-ignorable ones skipped), σ elsewhere; any other character its full lowercase mapping.
std::string lower_at(const std::string& s, const CodePoints& cp, size_t k) {
  if (cp.c[k] == 0x3A3) {
    ptrdiff_t j = (ptrdiff_t)k - 1;
    while (j >= 0 && case_ignorable(cp.c[j])) j--;
    bool final_sigma = j >= 0 && cased(cp.c[j]);
    size_t m = k + 1;
    while (m < cp.c.size() && case_ignorable(cp.c[m])) m++;
    if (m < cp.c.size() && cased(cp.c[m])) final_sigma = false;
    return final_sigma ? "\u03C2" : "\u03C3";
  }
  return map_utf8(Mapping::lower, s.data() + cp.begin[k], cp.begin[k + 1] - cp.begin[k]);
}

std::string title_at(const std::string& s, const CodePoints& cp, size_t k) {
  return map_utf8(Mapping::title, s.data() + cp.begin[k], cp.begin[k + 1] - cp.begin[k]);
}

bool jinja_word_separator(UChar32 c) {
  return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || (c >= 0 && u_isUWhiteSpace(c)) ||
         (c >= 0x1c && c <= 0x1f);  // Python's \s: Unicode White_Space plus the ASCII separators
}

}  // namespace

std::string py_upper(const std::string& s) { return map_utf8(Mapping::upper, s.data(), s.size()); }
std::string py_lower(const std::string& s) { return map_utf8(Mapping::lower, s.data(), s.size()); }

std::string py_title(const std::string& s) {
  CodePoints cp = code_points(s);
  std::string out;
  bool previous_cased = false;
  for (size_t k = 0; k < cp.c.size(); k++) {
    out += previous_cased ? lower_at(s, cp, k) : title_at(s, cp, k);
    previous_cased = cased(cp.c[k]);
  }
  return out;
}

std::string py_capitalize(const std::string& s) {
  CodePoints cp = code_points(s);
  std::string out;
  for (size_t k = 0; k < cp.c.size(); k++) out += k == 0 ? title_at(s, cp, k) : lower_at(s, cp, k);
  return out;
}

std::string jinja_title(const std::string& s) {
  CodePoints cp = code_points(s);
  std::string out;
  size_t k = 0;
  while (k < cp.c.size()) {
    size_t b = k;
    while (k < cp.c.size() && jinja_word_separator(cp.c[k])) k++;
    out.append(s, cp.begin[b], cp.begin[k] - cp.begin[b]);  // separators as they are
    if (k == cp.c.size()) break;
    size_t w = k;
    while (k < cp.c.size() && !jinja_word_separator(cp.c[k])) k++;
    size_t first_end = cp.begin[w + 1];
    out += py_upper(s.substr(cp.begin[w], first_end - cp.begin[w]));
    out += py_lower(s.substr(first_end, cp.begin[k] - first_end));
  }
  return out;
}

namespace {
// Python's do_upper_or_lower test: false at a character of the other case or a titlecase one; true when a character
// of the asked case was seen (Unicode's Uppercase / Lowercase properties, titlecase = category Lt).
bool all_cased_as(const std::string& s, bool upper) {
  bool cased = false;
  for (UChar32 c : code_points(s).c) {
    if (c < 0) continue;
    bool up = u_hasBinaryProperty(c, UCHAR_UPPERCASE), lo = u_hasBinaryProperty(c, UCHAR_LOWERCASE);
    if ((upper ? lo : up) || u_istitle(c)) return false;
    if (upper ? up : lo) cased = true;
  }
  return cased;
}
}  // namespace

bool py_isupper(const std::string& s) { return all_cased_as(s, true); }
bool py_islower(const std::string& s) { return all_cased_as(s, false); }

}  // namespace ogx::jinja
