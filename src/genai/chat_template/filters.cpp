// Scalar and string filters of Jinja2, plus transformers' tojson override
// (json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)).
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "genai/chat_template/filters_impl.h"

namespace ogx::jinja {

namespace {

Value f_tojson(Interp& in, const Value& v, CallArgs& a) {
  JsonFormat fmt;
  const Value* indent = a.get("indent", 0);
  if (indent && !indent->is_none() && !indent->is_undefined()) {
    if (indent->is_string()) in.fail("tojson: string indents are not supported");
    fmt.indent = (int)std::max<int64_t>(0, indent->as_int());
    fmt.item_sep = ",";
  }
  const Value* sep = a.get("separators", 2);
  if (sep && sep->is_list() && sep->list->size() == 2) {
    fmt.item_sep = to_str((*sep->list)[0]);
    fmt.key_sep = to_str((*sep->list)[1]);
  }
  const Value* sk = a.get("sort_keys", 3);
  fmt.sort_keys = sk && truthy(*sk);
  try {
    return Value::string(to_json(v, fmt));
  } catch (const Error& e) {
    in.fail(std::string("tojson: ") + e.what());
  }
}

Value f_trim(Interp&, const Value& v, CallArgs& a) { return Value::string(py_strip(to_str(v), a.get("chars", 0), true, true)); }
Value f_upper(Interp&, const Value& v, CallArgs&) { return Value::string(py_upper(to_str(v))); }
Value f_lower(Interp&, const Value& v, CallArgs&) { return Value::string(py_lower(to_str(v))); }
Value f_title(Interp&, const Value& v, CallArgs&) { return Value::string(jinja_title(to_str(v))); }
Value f_capitalize(Interp&, const Value& v, CallArgs&) { return Value::string(py_capitalize(to_str(v))); }
Value f_string(Interp&, const Value& v, CallArgs&) { return Value::string(to_str(v)); }
Value f_safe(Interp&, const Value& v, CallArgs&) {
  Value r = Value::string(to_str(v));
  r.is_markup = true;
  return r;
}

Value f_length(Interp& in, const Value& v, CallArgs&) {
  if (!v.is_string() && !v.is_list() && !v.is_dict() && !v.is_undefined())
    in.fail(std::string("object of type '") + type_name(v) + "' has no len()");
  return Value::integer((int64_t)length(v));
}

Value f_default(Interp&, const Value& v, CallArgs& a) {
  const Value* d = a.get("default_value", 0);
  const Value* boolean = a.get("boolean", 1);
  bool use_default = v.is_undefined() || (boolean && truthy(*boolean) && !truthy(v));
  if (!use_default) return v;
  return d ? *d : Value::string("");
}

Value f_replace(Interp& in, const Value& v, CallArgs& a) {
  const Value* old = a.get("old", 0);
  const Value* neu = a.get("new", 1);
  const Value* count = a.get("count", 2);
  if (!old || !neu) in.fail("replace filter needs old and new");
  return Value::string(py_replace(to_str(v), to_str(*old), to_str(*neu), count && count->is_number() ? count->as_int() : -1));
}

Value f_int(Interp&, const Value& v, CallArgs& a) {
  const Value* d = a.get("default", 0);
  Value def = d ? *d : Value::integer(0);
  if (v.kind == Kind::Int) return v;
  if (v.kind == Kind::Bool) return Value::integer(v.b);
  if (v.kind == Kind::Float) return std::isfinite(v.f) ? Value::integer((int64_t)v.f) : def;
  if (!v.is_string()) return def;
  std::string s = py_strip(*v.s, nullptr, true, true);
  char* end = nullptr;
  long long i = strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == 0) return Value::integer(i);
  double f = strtod(s.c_str(), &end);
  if (!s.empty() && *end == 0 && std::isfinite(f)) return Value::integer((int64_t)f);
  return def;
}

Value f_float(Interp&, const Value& v, CallArgs& a) {
  const Value* d = a.get("default", 0);
  Value def = d ? *d : Value::number(0.0);
  if (v.is_number()) return Value::number(v.as_double());
  if (!v.is_string()) return def;
  std::string s = py_strip(*v.s, nullptr, true, true);
  char* end = nullptr;
  double f = strtod(s.c_str(), &end);
  if (!s.empty() && *end == 0) return Value::number(f);
  return def;
}

Value f_abs(Interp& in, const Value& v, CallArgs&) {
  if (v.kind == Kind::Float) return Value::number(std::fabs(v.f));
  if (v.is_number()) return Value::integer(std::llabs(v.as_int()));
  in.fail(std::string("bad operand type for abs(): '") + type_name(v) + "'");
}

Value f_round(Interp& in, const Value& v, CallArgs& a) {
  const Value* p = a.get("precision", 0);
  const Value* m = a.get("method", 1);
  int64_t prec = p && p->is_number() ? p->as_int() : 0;
  std::string method = m && m->is_string() ? *m->s : "common";
  if (!v.is_number()) in.fail("round filter needs a number");
  if (v.kind != Kind::Float && method == "common") return Value::integer(v.as_int());
  double scale = std::pow(10.0, (double)prec), x = v.as_double() * scale;
  double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);
  if (method != "common" && method != "ceil" && method != "floor") in.fail("method must be common, ceil or floor");
  return Value::number(r / scale);
}

Value f_indent(Interp&, const Value& v, CallArgs& a) {
  const Value* w = a.get("width", 0);
  const Value* first = a.get("first", 1);
  const Value* blank = a.get("blank", 2);
  std::string ind = w && w->is_string() ? *w->s : std::string(size_t(w && w->is_number() ? std::max<int64_t>(0, w->as_int()) : 4), ' ');
  std::string s = to_str(v) + "\n";
  std::vector<std::string> lines;
  size_t b = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\n' || s[k] == '\r') {
      lines.push_back(s.substr(b, k - b));
      if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
      b = k + 1;
    }
  }
  std::string rv;
  bool do_blank = blank && truthy(*blank);
  for (size_t k = 0; k < lines.size(); ++k) {
    if (k) rv += "\n";
    if (k && (do_blank || !lines[k].empty())) rv += ind;
    rv += lines[k];
  }
  if (first && truthy(*first)) rv = ind + rv;
  return Value::string(rv);
}

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {
Value f_escape(Interp&, const Value& v, CallArgs&) {
  if (v.is_markup) return v;
  Value r = Value::string(html_escape(to_str(v)));
  r.is_markup = true;
  return r;
}

Value f_format(Interp& in, const Value& v, CallArgs& a) {
  if (!a.kwargs.empty()) in.fail("format filter with keyword arguments is not supported");
  Value whole = a.args.size() == 1 ? a.args[0] : Value::make_tuple(a.args);
  return Value::string(py_percent(in, to_str(v), a.args, whole));
}

Value f_wordcount(Interp&, const Value& v, CallArgs&) {
  return Value::integer((int64_t)py_split(to_str(v), nullptr, -1, false).size());
}

Value f_center(Interp&, const Value& v, CallArgs& a) {
  const Value* w = a.get("width", 0);
  std::string s = to_str(v);
  int64_t width = w && w->is_number() ? w->as_int() : 80, n = (int64_t)utf8_chars(s).size();
  if (n >= width) return Value::string(s);
  int64_t pad = width - n, left = pad / 2 + (pad & width & 1);
  return Value::string(std::string(size_t(left), ' ') + s + std::string(size_t(pad - left), ' '));
}

}  // namespace

void register_scalar_filters(FilterMap& m) {
  m["tojson"] = f_tojson;
  m["trim"] = f_trim;
  m["upper"] = f_upper;
  m["lower"] = f_lower;
  m["title"] = f_title;
  m["capitalize"] = f_capitalize;
  m["string"] = f_string;
  m["safe"] = f_safe;
  m["length"] = f_length;
  m["count"] = f_length;
  m["default"] = f_default;
  m["d"] = f_default;
  m["replace"] = f_replace;
  m["int"] = f_int;
  m["float"] = f_float;
  m["abs"] = f_abs;
  m["round"] = f_round;
  m["indent"] = f_indent;
  m["escape"] = f_escape;
  m["e"] = f_escape;
  m["forceescape"] = f_escape;
  m["format"] = f_format;
  m["wordcount"] = f_wordcount;
  m["center"] = f_center;
}

}  // namespace ogx::jinja
