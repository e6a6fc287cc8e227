// Python str operations templates rely on: strip family, case changes, replace, split, slicing, % formatting.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <cstdio>

#include "common/error.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

namespace {
bool py_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }
}  // namespace

std::string py_strip(const std::string& s, const Value* chars, bool left, bool right) {
  bool custom = chars && chars->is_string();
  std::vector<std::string> set;
  if (custom) set = utf8_chars(*chars->s);
  auto strip_char = [&](const std::string& c) {
    if (!custom) return c.size() == 1 && py_space((unsigned char)c[0]);
    for (auto& x : set)
      if (x == c) return true;
    return false;
  };
  std::vector<std::string> cs = utf8_chars(s);
  size_t b = 0, e = cs.size();
  if (left)
    while (b < e && strip_char(cs[b])) ++b;
  if (right)
    while (e > b && strip_char(cs[e - 1])) --e;
  std::string out;
  for (size_t k = b; k < e; ++k) out += cs[k];
  return out;
}

std::string py_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  if (from.empty()) {
    std::string out;
    auto cs = utf8_chars(s);
    int64_t n = 0;
    for (auto& c : cs) {
      if (count < 0 || n++ < count) out += to;
      out += c;
    }
    if (count < 0 || n < count) out += to;
    return out;
  }
  std::string out;
  size_t pos = 0;
  int64_t n = 0;
  while (count < 0 || n < count) {
    size_t f = s.find(from, pos);
    if (f == std::string::npos) break;
    out.append(s, pos, f - pos);
    out += to;
    pos = f + from.size();
    ++n;
  }
  out.append(s, pos, std::string::npos);
  return out;
}

namespace {
ValueList split_whitespace(const std::string& s, int64_t maxsplit, bool from_right) {
  std::vector<std::pair<size_t, size_t>> words;
  size_t k = 0;
  while (k < s.size()) {
    while (k < s.size() && py_space((unsigned char)s[k])) ++k;
    if (k >= s.size()) break;
    size_t b = k;
    while (k < s.size() && !py_space((unsigned char)s[k])) ++k;
    words.emplace_back(b, k);
  }
  ValueList out;
  if (maxsplit < 0 || (int64_t)words.size() <= maxsplit + 1) {
    for (auto& w : words) out.push_back(Value::string(s.substr(w.first, w.second - w.first)));
    return out;
  }
  if (!from_right) {
    for (int64_t j = 0; j < maxsplit; ++j) out.push_back(Value::string(s.substr(words[j].first, words[j].second - words[j].first)));
    size_t b = words[maxsplit].first, e = s.size();
    while (e > b && py_space((unsigned char)s[e - 1])) --e;
    out.push_back(Value::string(s.substr(b, e - b)));
    return out;
  }
  size_t first = words.size() - maxsplit;
  size_t b = 0, e = words[first - 1].second;
  while (b < e && py_space((unsigned char)s[b])) ++b;
  out.push_back(Value::string(s.substr(b, e - b)));
  for (size_t j = first; j < words.size(); ++j) out.push_back(Value::string(s.substr(words[j].first, words[j].second - words[j].first)));
  return out;
}
}  // namespace

ValueList py_split(const std::string& s, const Value* sep, int64_t maxsplit, bool from_right) {
  if (!sep || sep->is_none()) return split_whitespace(s, maxsplit, from_right);
  if (!sep->is_string()) throw_error("must be str or None, not ", type_name(*sep));
  const std::string& d = *sep->s;
  if (d.empty()) throw_error("empty separator");
  std::vector<std::string> parts;
  size_t pos = 0;
  while (true) {
    size_t f = s.find(d, pos);
    if (f == std::string::npos) break;
    parts.push_back(s.substr(pos, f - pos));
    pos = f + d.size();
  }
  parts.push_back(s.substr(pos));
  if (maxsplit >= 0 && (int64_t)parts.size() > maxsplit + 1) {
    std::vector<std::string> merged;
    if (!from_right) {
      merged.assign(parts.begin(), parts.begin() + maxsplit);
      std::string rest = parts[maxsplit];
      for (size_t k = maxsplit + 1; k < parts.size(); ++k) rest += d + parts[k];
      merged.push_back(rest);
    } else {
      size_t keep = parts.size() - maxsplit;
      std::string head = parts[0];
      for (size_t k = 1; k < keep; ++k) head += d + parts[k];
      merged.push_back(head);
      merged.insert(merged.end(), parts.begin() + keep, parts.end());
    }
    parts = std::move(merged);
  }
  ValueList out;
  for (auto& p : parts) out.push_back(Value::string(std::move(p)));
  return out;
}

Value py_slice(const Value& seq, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto as_opt = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_none() || v.is_undefined()) return std::nullopt;
    if (v.kind != Kind::Int && v.kind != Kind::Bool) throw_error("slice ", what, " must be an integer");
    return v.as_int();
  };
  int64_t step = as_opt(step_v, "step").value_or(1);
  if (step == 0) throw_error("slice step cannot be zero");
  std::vector<std::string> chars;
  int64_t n;
  if (seq.is_string()) {
    chars = utf8_chars(*seq.s);
    n = (int64_t)chars.size();
  } else if (seq.is_list()) {
    n = (int64_t)seq.list->size();
  } else {
    throw_error("'", type_name(seq), "' object is not subscriptable");
  }
  auto norm = [&](std::optional<int64_t> v, int64_t def) {
    if (!v) return def;
    int64_t x = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  int64_t b = norm(as_opt(start_v, "start"), step > 0 ? 0 : n - 1);
  int64_t e = norm(as_opt(stop_v, "stop"), step > 0 ? n : -1);
  std::string s_out;
  ValueList l_out;
  for (int64_t k = b; step > 0 ? k < e : k > e; k += step) {
    if (seq.is_string()) s_out += chars[k];
    else l_out.push_back((*seq.list)[k]);
  }
  if (seq.is_string()) return Value::string(std::move(s_out));
  Value r = Value::make_list(std::move(l_out));
  r.is_tuple = seq.is_tuple;
  return r;
}

std::string py_percent(Interp& in, const std::string& fmt, const ValueList& args, const Value& whole) {
  std::string out;
  size_t ai = 0;
  for (size_t k = 0; k < fmt.size(); ++k) {
    if (fmt[k] != '%') {
      out += fmt[k];
      continue;
    }
    if (++k >= fmt.size()) in.fail("incomplete format");
    if (fmt[k] == '%') {
      out += '%';
      continue;
    }
    std::string spec = "%";
    while (k < fmt.size() && std::strchr("-+ #0123456789.", fmt[k])) spec += fmt[k++];
    if (k >= fmt.size()) in.fail("incomplete format");
    char conv = fmt[k];
    if (ai >= args.size()) in.fail("not enough arguments for format string");
    const Value& v = args[ai++];
    char buf[512];
    if (conv == 's' || conv == 'r') {
      std::string sv = conv == 's' ? to_str(v) : repr(v);
      snprintf(buf, sizeof buf, (spec + "s").c_str(), sv.c_str());
      out += spec.size() == 1 ? sv : std::string(buf);
    } else if (conv == 'd' || conv == 'i') {
      if (!v.is_number()) in.fail("%d format: a real number is required");
      snprintf(buf, sizeof buf, (spec + "lld").c_str(), (long long)(v.kind == Kind::Float ? (int64_t)v.f : v.as_int()));
      out += buf;
    } else if (std::strchr("feEgGxXo", conv)) {
      if (!v.is_number()) in.fail("format: a real number is required");
      if (std::strchr("xXo", conv)) snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), (long long)v.as_int());
      else snprintf(buf, sizeof buf, (spec + conv).c_str(), v.as_double());
      out += buf;
    } else {
      in.fail(std::string("unsupported format character '") + conv + "'");
    }
  }
  if (ai < args.size() && !(args.size() == 1 && whole.is_dict())) in.fail("not all arguments converted during string formatting");
  return out;
}

}  // namespace ogx::jinja
