#include "genai/guidance/number_range.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/error.h"

namespace ogx::genai::guidance {

namespace {

constexpr double kHuge = 1e18;
const std::string kAnyRest = "[0-9]{0," + std::to_string(kMaxFracDigits - 1) + "}";
const std::string kAnyFrac = "(?:\\.[0-9]{1," + std::to_string(kMaxFracDigits) + "})?";

std::string join(const std::vector<std::string>& alts) {
  if (alts.size() == 1) return alts[0];
  std::string s = "(?:";
  for (size_t i = 0; i < alts.size(); i++) s += (i ? "|" : "") + alts[i];
  return s + ")";
}

std::string digit_class(int lo, int hi) {
  if (lo == hi) return std::string(1, (char)('0' + lo));
  return "[" + std::string(1, (char)('0' + lo)) + "-" + std::string(1, (char)('0' + hi)) + "]";
}

// Decimal strings of the same length, no leading zeros beyond what lo has, in [lo, hi].
std::string same_length(const std::string& lo, const std::string& hi) {
  if (lo.empty()) return "";
  if (lo[0] == hi[0]) return lo.substr(0, 1) + same_length(lo.substr(1), hi.substr(1));
  const size_t n = lo.size() - 1;
  const std::string rest = n ? "[0-9]{" + std::to_string(n) + "}" : "";
  if (lo.substr(1) == std::string(n, '0') && hi.substr(1) == std::string(n, '9'))
    return digit_class(lo[0] - '0', hi[0] - '0') + rest;
  std::vector<std::string> alts;
  alts.push_back(lo.substr(0, 1) + same_length(lo.substr(1), std::string(n, '9')));
  if (lo[0] + 1 <= hi[0] - 1) alts.push_back(digit_class(lo[0] - '0' + 1, hi[0] - '0' - 1) + rest);
  alts.push_back(hi.substr(0, 1) + same_length(std::string(n, '0'), hi.substr(1)));
  return join(alts);
}

// Non-negative integers in [a, b] (b < 0: unbounded, up to kMaxIntDigits digits). Empty string: none.
std::string nonneg_integers(int64_t a, int64_t b) {
  std::vector<std::string> alts;
  const int la = (int)std::to_string(a).size();
  const int lb = b < 0 ? kMaxIntDigits : (int)std::to_string(b).size();
  int64_t p = 1;
  for (int d = 1; d < la; d++) p *= 10;
  for (int d = la; d <= lb; d++, p *= 10) {
    int64_t lo = std::max(a, d == 1 ? 0 : p), hi = p * 10 - 1;
    if (b >= 0) hi = std::min(hi, b);
    if (lo > hi) continue;
    alts.push_back(same_length(std::to_string(lo), std::to_string(hi)));
  }
  return alts.empty() ? "" : join(alts);
}

struct Dec {
  int64_t i = 0;
  std::string f;  // fraction digits, no trailing zeros
};

Dec to_dec(double v) {
  char buf[128];
  auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::fixed);
  std::string s(buf, r.ptr);
  Dec d;
  size_t dot = s.find('.');
  d.i = std::stoll(s.substr(0, dot));
  if (dot != std::string::npos) d.f = s.substr(dot + 1);
  while (!d.f.empty() && d.f.back() == '0') d.f.pop_back();
  return d;
}

std::string optional_group(const std::vector<std::string>& alts, bool empty) {
  std::string s = "(?:";
  for (size_t i = 0; i < alts.size(); i++) s += (i ? "|" : "") + alts[i];
  return s + ")" + (empty ? "?" : "");
}

// Digit strings r (empty allowed where the bounds permit) with 0.fl <= 0.r <= 0.fh (strict: < / >), as
// alternatives (each a regex starting with a digit); `empty` tells whether r = "" fits. Depth: digits so far.
std::vector<std::string> fraction_alts(const std::string& fl, bool sl, const std::string& fh, bool sh, bool& empty,
                                       int depth = 0) {
  empty = fl.empty() && !sl && !(fh.empty() && sh);
  std::vector<std::string> alts;
  if (depth >= kMaxFracDigits) return alts;
  const std::string n = std::to_string(kMaxFracDigits - depth);
  if (fl.empty() && !fh.empty() && !sh && fh.find_first_not_of('9') == std::string::npos) {  // no upper bound
    alts.push_back(sl ? "0{0," + n + "}[1-9][0-9]{0," + n + "}" : "[0-9]{1," + n + "}");
    return alts;
  }
  const int dl = fl.empty() ? 0 : fl[0] - '0', dh = fh.empty() ? 0 : fh[0] - '0';
  const std::string tl = fl.empty() ? "" : fl.substr(1), th = fh.empty() ? "" : fh.substr(1);
  auto digit_then = [&](int d, const std::string& l, bool s1, const std::string& h, bool s2) {
    bool e;
    auto rest = fraction_alts(l, s1, h, s2, e, depth + 1);
    if (rest.empty() && !e) return;
    alts.push_back(std::string(1, (char)('0' + d)) + (rest.empty() ? "" : optional_group(rest, e)));
  };
  if (dl < dh) {
    if (dl + 1 <= dh - 1) alts.push_back(digit_class(dl + 1, dh - 1) + kAnyRest);
    digit_then(dl, tl, sl, std::string(kMaxFracDigits, '9'), false);
    digit_then(dh, "", false, th, sh);
  } else if (dl == dh && (!fl.empty() || !fh.empty())) {
    digit_then(dl, tl, sl, th, sh);
  } else if (dl == dh && !sl && !sh) {  // both bounds 0: r must be all zeros
    alts.push_back("0{1," + std::to_string(kMaxFracDigits - depth) + "}");
  }
  return alts;
}

// "" or ".digits" with the fraction in the bounds; nullopt: none fits.
std::optional<std::string> fraction_part(const std::string& fl, bool sl, const std::string& fh, bool sh) {
  bool empty;
  auto alts = fraction_alts(fl, sl, fh, sh, empty);
  if (alts.empty()) return empty ? std::optional<std::string>("") : std::nullopt;
  return "(?:\\." + join(alts) + ")" + (empty ? "?" : "");
}

// Non-negative decimals in [L, H] (strict flags; H absent: unbounded).
std::vector<std::string> nonneg_decimals(const Dec& L, bool sl, const std::optional<Dec>& H, bool sh) {
  const std::string nines(kMaxFracDigits, '9');
  std::vector<std::string> alts;
  auto add = [&](const std::string& ip, const std::optional<std::string>& fp) {
    if (fp) alts.push_back(ip + *fp);
  };
  if (!H || H->i > L.i) {
    add(std::to_string(L.i), fraction_part(L.f, sl, nines, false));
    int64_t hi_int = H ? H->i - 1 : -1;
    if (!H || L.i + 1 <= hi_int) {
      std::string mid = nonneg_integers(L.i + 1, hi_int);
      if (!mid.empty()) alts.push_back(mid + kAnyFrac);
    }
    if (H) add(std::to_string(H->i), fraction_part("", false, H->f, sh));
  } else if (H->i == L.i && (L.f < H->f || (L.f == H->f && !sl && !sh))) {
    add(std::to_string(L.i), fraction_part(L.f, sl, H->f, sh));
  }
  return alts;
}

}  // namespace

std::string integer_range_regex(std::optional<Bound> lo, std::optional<Bound> hi) {
  if (lo && !(std::fabs(lo->value) < kHuge)) lo.reset();  // also NaN
  if (hi && !(std::fabs(hi->value) < kHuge)) hi.reset();
  const bool has_lo = lo.has_value(), has_hi = hi.has_value();
  int64_t a = 0, b = 0;
  if (has_lo) a = (int64_t)(lo->exclusive ? std::floor(lo->value) + 1 : std::ceil(lo->value));
  if (has_hi) b = (int64_t)(hi->exclusive ? std::ceil(hi->value) - 1 : std::floor(hi->value));
  OGX_CHECK(!has_lo || !has_hi || a <= b, "integer range [", a, ", ", b, "] is empty");
  std::vector<std::string> alts;
  if (!has_lo || a < 0) {  // negative integers -y, y in [max(1, -b), -a]
    int64_t ylo = has_hi && b < 0 ? -b : 1, yhi = has_lo ? -a : -1;
    std::string r = nonneg_integers(ylo, yhi);
    if (!r.empty()) alts.push_back("-" + r);
  }
  if (!has_hi || b >= 0) {
    std::string r = nonneg_integers(has_lo ? std::max<int64_t>(a, 0) : 0, has_hi ? b : -1);
    if (!r.empty()) alts.push_back(r);
  }
  OGX_CHECK(!alts.empty(), "integer range is empty");
  return join(alts);
}

std::string number_range_regex(std::optional<Bound> lo, std::optional<Bound> hi) {
  if (lo && !(std::fabs(lo->value) < kHuge)) lo.reset();  // also NaN
  if (hi && !(std::fabs(hi->value) < kHuge)) hi.reset();
  if (!lo && !hi)
    return "-?(?:0|[1-9][0-9]{0," + std::to_string(kMaxIntDigits - 1) + "})" + kAnyFrac + "(?:[eE][+-]?[0-9]{1,2})?";
  OGX_CHECK(!lo || !hi || lo->value < hi->value || (lo->value == hi->value && !lo->exclusive && !hi->exclusive),
            "number range is empty (minimum ", lo ? lo->value : 0, ", maximum ", hi ? hi->value : 0, ")");
  std::vector<std::string> alts;
  if (!lo || lo->value < 0) {  // x < 0: "-" y with y = -x > 0
    Dec ylo;
    bool ylo_strict = true;
    if (hi && hi->value < 0) ylo = to_dec(hi->value), ylo_strict = hi->exclusive;
    std::optional<Dec> yhi;
    if (lo) yhi = to_dec(lo->value);
    for (auto& a : nonneg_decimals(ylo, ylo_strict, yhi, lo && lo->exclusive)) alts.push_back("-" + a);
  }
  if (!hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive)) {
    Dec L;
    bool sl = false;
    if (lo && lo->value >= 0) L = to_dec(lo->value), sl = lo->exclusive;
    std::optional<Dec> H;
    if (hi) H = to_dec(hi->value);
    for (auto& a : nonneg_decimals(L, sl, H, hi && hi->exclusive)) alts.push_back(a);
  }
  OGX_CHECK(!alts.empty(), "number range is empty");
  return join(alts);
}

}  // namespace ogx::genai::guidance
