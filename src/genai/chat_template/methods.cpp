// Attribute and item access (Jinja's getattr/getitem) and the Python methods of str, list and dict.
// Like transformers' ImmutableSandboxedEnvironment, methods that mutate lists and dicts are unsafe.
#include <algorithm>
#include <cctype>
#include <set>

#include "common/error.h"
#include "genai/chat_template/case_mapping.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

namespace {
using Method = Value (*)(Interp&, const Value&, CallArgs&);

const Value* arg(CallArgs& a, const char* name, size_t pos) { return a.get(name, pos); }
int64_t int_arg(CallArgs& a, const char* name, size_t pos, int64_t def) {
  const Value* v = arg(a, name, pos);
  return v && v->is_number() ? v->as_int() : def;
}
std::string str_arg(Interp& in, CallArgs& a, const char* name, size_t pos) {
  const Value* v = arg(a, name, pos);
  if (!v || !v->is_string()) in.fail(std::string("argument '") + name + "' must be a string");
  return *v->s;
}

bool affix_match(Interp& in, const std::string& s, const Value* what, bool prefix) {
  if (!what) in.fail("startswith/endswith takes at least 1 argument");
  ValueList opts = what->is_list() ? *what->list : ValueList{*what};
  for (auto& o : opts) {
    if (!o.is_string()) in.fail("startswith/endswith first arg must be str or a tuple of str");
    const std::string& p = *o.s;
    if (p.size() > s.size()) continue;
    if (prefix ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0) return true;
  }
  return false;
}

template <class Pred>
Value all_chars(const std::string& s, Pred p) {
  if (s.empty()) return Value::boolean(false);
  for (unsigned char c : s)
    if (!p(c)) return Value::boolean(false);
  return Value::boolean(true);
}

Value str_method(Interp& in, const std::string& name, const std::string& s, CallArgs& a) {
  if (name == "strip") return Value::string(py_strip(s, arg(a, "chars", 0), true, true));
  if (name == "lstrip") return Value::string(py_strip(s, arg(a, "chars", 0), true, false));
  if (name == "rstrip") return Value::string(py_strip(s, arg(a, "chars", 0), false, true));
  if (name == "split" || name == "rsplit")
    return Value::make_list(py_split(s, arg(a, "sep", 0), int_arg(a, "maxsplit", 1, -1), name == "rsplit"));
  if (name == "splitlines") {
    ValueList out;
    size_t b = 0;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] == '\n' || s[k] == '\r') {
        out.push_back(Value::string(s.substr(b, k - b)));
        if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
        b = k + 1;
      }
    }
    if (b < s.size()) out.push_back(Value::string(s.substr(b)));
    return Value::make_list(std::move(out));
  }
  if (name == "startswith") return Value::boolean(affix_match(in, s, arg(a, "prefix", 0), true));
  if (name == "endswith") return Value::boolean(affix_match(in, s, arg(a, "suffix", 0), false));
  if (name == "upper") return Value::string(py_upper(s));
  if (name == "lower") return Value::string(py_lower(s));
  if (name == "title") return Value::string(py_title(s));
  if (name == "capitalize") return Value::string(py_capitalize(s));
  if (name == "replace")
    return Value::string(py_replace(s, str_arg(in, a, "old", 0), str_arg(in, a, "new", 1), int_arg(a, "count", 2, -1)));
  if (name == "format") return Value::string(py_format(in, s, a));
  if (name == "join") {
    const Value* seq = arg(a, "iterable", 0);
    if (!seq) in.fail("join() takes exactly one argument");
    std::string out;
    bool first = true;
    for (auto& v : iterate(*seq)) {
      if (!v.is_string()) in.fail(std::string("sequence item: expected str instance, ") + type_name(v) + " found");
      if (!first) out += s;
      first = false;
      out += *v.s;
    }
    return Value::string(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    std::string sub = str_arg(in, a, "sub", 0);
    if (name == "count") {
      if (sub.empty()) return Value::integer((int64_t)utf8_chars(s).size() + 1);
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value::integer(n);
    }
    size_t p = name[0] == 'r' ? s.rfind(sub) : s.find(sub);
    if (p == std::string::npos && (name == "index" || name == "rindex")) in.fail("substring not found");
    return Value::integer(p == std::string::npos ? -1 : (int64_t)utf8_chars(s.substr(0, p)).size());
  }
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") return all_chars(s, [](unsigned char c) { return std::isdigit(c) != 0; });
  if (name == "isalpha") return all_chars(s, [](unsigned char c) { return std::isalpha(c) != 0 || c >= 0x80; });
  if (name == "isalnum") return all_chars(s, [](unsigned char c) { return std::isalnum(c) != 0 || c >= 0x80; });
  if (name == "isspace") return all_chars(s, [](unsigned char c) { return std::isspace(c) != 0; });
  if (name == "isupper") return Value::boolean(py_isupper(s));
  if (name == "islower") return Value::boolean(py_islower(s));
  if (name == "removeprefix" || name == "removesuffix") {
    std::string p = str_arg(in, a, "fix", 0);
    bool pre = name == "removeprefix";
    if (p.size() <= s.size() && (pre ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0))
      return Value::string(pre ? s.substr(p.size()) : s.substr(0, s.size() - p.size()));
    return Value::string(s);
  }
  if (name == "zfill") {
    int64_t w = int_arg(a, "width", 0, 0);
    std::string out = s;
    size_t sign = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if ((int64_t)s.size() < w) out.insert(sign, std::string(size_t(w) - s.size(), '0'));
    return Value::string(out);
  }
  if (name == "ljust" || name == "rjust" || name == "center") {
    int64_t w = int_arg(a, "width", 0, 0);
    int64_t n = (int64_t)utf8_chars(s).size();
    if (n >= w) return Value::string(s);
    std::string fill = a.args.size() > 1 && a.args[1].is_string() ? *a.args[1].s : " ";
    size_t pad = size_t(w - n), left = name == "rjust" ? pad : name == "center" ? pad / 2 + (pad & w & 1) : 0;
    std::string out;
    for (size_t k = 0; k < left; ++k) out += fill;
    out += s;
    for (size_t k = left; k < pad; ++k) out += fill;
    return Value::string(out);
  }
  in.fail("'str' object has no attribute '" + name + "'");
}

const std::set<std::string> kStrMethods = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith", "upper", "lower",
    "title", "capitalize", "replace", "format", "join", "find", "rfind", "index", "rindex", "count", "isdigit",
    "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace", "isupper", "islower", "removeprefix",
    "removesuffix", "zfill", "ljust", "rjust", "center"};
const std::set<std::string> kListMutators = {"append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove"};
const std::set<std::string> kDictMutators = {"clear", "pop", "popitem", "setdefault", "update"};

Value list_method(Interp& in, const std::string& name, const Value& self, CallArgs& a) {
  ValueList& l = *self.list;
  if (name == "index" || name == "count") {
    const Value* x = arg(a, "value", 0);
    if (!x) in.fail(name + "() takes exactly one argument");
    int64_t n = 0;
    for (size_t k = 0; k < l.size(); ++k) {
      if (!equals(l[k], *x)) continue;
      if (name == "index") return Value::integer((int64_t)k);
      ++n;
    }
    if (name == "index") in.fail("value is not in list");
    return Value::integer(n);
  }
  if (name == "copy") return Value::make_list(l);
  if (name == "append") {
    const Value* x = arg(a, "object", 0);
    in.check_list(l.size() + 1);
    if (x) l.push_back(*x);
    return Value::none();
  }
  if (name == "extend") {
    ValueList add = iterate(*arg(a, "iterable", 0));
    in.check_list(l.size() + add.size());
    l.insert(l.end(), add.begin(), add.end());
    return Value::none();
  }
  if (name == "insert") {
    in.check_list(l.size() + 1);
    int64_t i = std::clamp<int64_t>(int_arg(a, "index", 0, 0), 0, (int64_t)l.size());
    l.insert(l.begin() + i, *arg(a, "object", 1));
    return Value::none();
  }
  if (name == "pop") {
    if (l.empty()) in.fail("pop from empty list");
    int64_t i = int_arg(a, "index", 0, -1);
    if (i < 0) i += (int64_t)l.size();
    if (i < 0 || i >= (int64_t)l.size()) in.fail("pop index out of range");
    Value v = l[i];
    l.erase(l.begin() + i);
    return v;
  }
  if (name == "clear") { l.clear(); return Value::none(); }
  if (name == "reverse") { std::reverse(l.begin(), l.end()); return Value::none(); }
  in.fail(std::string("'") + type_name(self) + "' object has no attribute '" + name + "'");
}

Value dict_method(Interp& in, const std::string& name, const Value& self, CallArgs& a) {
  ValueDict& d = *self.dict;
  if (name == "items") {
    ValueList out;
    for (auto& kv : d.items) out.push_back(Value::make_tuple({key_value(kv.first), kv.second}));
    return Value::make_list(std::move(out));
  }
  if (name == "keys" || name == "values") {
    ValueList out;
    for (auto& kv : d.items) out.push_back(name == "keys" ? key_value(kv.first) : kv.second);
    return Value::make_list(std::move(out));
  }
  if (name == "get") {
    const Value* k = arg(a, "key", 0);
    const Value* def = arg(a, "default", 1);
    const Value* v = k && (k->is_string() || k->is_number() || k->is_none()) ? d.find(dict_key(*k)) : nullptr;
    return v ? *v : def ? *def : Value::none();
  }
  if (name == "copy") {
    Value c = Value::make_dict();
    *c.dict = d;
    return c;
  }
  if (name == "update") {
    if (const Value* o = arg(a, "other", 0); o && o->is_dict())
      for (auto& kv : o->dict->items) d.set(kv.first, kv.second);
    for (auto& kv : a.kwargs) d.set(kv.first, kv.second);
    return Value::none();
  }
  if (name == "setdefault" || name == "pop") {
    std::string key = str_arg(in, a, "key", 0);
    const Value* def = arg(a, "default", 1);
    if (Value* v = d.find(key)) {
      Value r = *v;
      if (name == "pop")
        for (size_t k = 0; k < d.items.size(); ++k)
          if (d.items[k].first == key) { d.items.erase(d.items.begin() + k); break; }
      return r;
    }
    if (name == "pop" && !def) in.fail("KeyError: '" + key + "'");
    if (name == "setdefault") d.set(key, def ? *def : Value::none());
    return def ? *def : Value::none();
  }
  if (name == "clear") { d.items.clear(); return Value::none(); }
  in.fail("'dict' object has no attribute '" + name + "'");
}

const std::set<std::string> kListMethods = {"index", "count", "copy", "append", "extend", "insert", "pop", "clear", "reverse"};
const std::set<std::string> kDictMethods = {"items", "keys", "values", "get", "copy", "update", "setdefault", "pop", "clear"};

Value bound(Interp& in, const Value& obj, const std::string& name) {
  bool mutator = (obj.is_list() && kListMutators.count(name)) || (obj.is_dict() && kDictMutators.count(name));
  if (mutator && in.immutable()) {
    std::string msg = "access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.";
    return Value::function(name, [&in, msg](CallArgs&) -> Value { in.fail("SecurityError: " + msg); });
  }
  Interp* ip = &in;
  return Value::function(name, [ip, obj, name](CallArgs& a) -> Value {
    if (obj.is_string()) return str_method(*ip, name, *obj.s, a);
    if (obj.is_list()) return list_method(*ip, name, obj, a);
    return dict_method(*ip, name, obj, a);
  });
}

[[noreturn]] void undefined_error(Interp& in, const Value& obj) {
  in.fail((obj.s ? "'" + *obj.s + "'" : std::string("value")) + " is undefined");
}
}  // namespace

Value get_attr(Interp& in, const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case Kind::Undefined: undefined_error(in, obj);
    case Kind::String:
      if (kStrMethods.count(name)) return bound(in, obj, name);
      break;
    case Kind::List:
      if (kListMethods.count(name)) return bound(in, obj, name);
      break;
    case Kind::Dict: {
      if (!obj.is_namespace && kDictMethods.count(name)) return bound(in, obj, name);
      if (const Value* v = obj.dict->find(name)) return *v;
      break;
    }
    default: break;
  }
  return Value::undefined(std::string("'") + type_name(obj) + "' object has no attribute '" + name + "'");
}

Value get_item(Interp& in, const Value& obj, const Value& key) {
  switch (obj.kind) {
    case Kind::Undefined: undefined_error(in, obj);
    case Kind::Dict:
      if (key.is_string()) {
        if (const Value* v = obj.dict->find(*key.s)) return *v;
        return get_attr(in, obj, *key.s);
      }
      if (key.is_number() || key.is_none())
        if (const Value* v = obj.dict->find(dict_key(key))) return *v;
      break;
    case Kind::List: case Kind::String:
      if ((key.kind == Kind::Int || key.kind == Kind::Bool) && !obj.is_generator) {
        int64_t n = (int64_t)length(obj), i = key.as_int();
        if (i < 0) i += n;
        if (i < 0 || i >= n) break;
        if (obj.is_list()) return (*obj.list)[i];
        return Value::string(is_ascii(*obj.s) ? obj.s->substr(i, 1) : utf8_chars(*obj.s)[i]);
      }
      if (key.is_string()) return get_attr(in, obj, *key.s);
      break;
    default: break;
  }
  return Value::undefined(std::string("'") + type_name(obj) + "' object has no element " + repr(key));
}

Value get_attribute_path(Interp& in, const Value& obj, const std::string& path) {
  Value cur = obj;
  size_t b = 0;
  while (true) {
    size_t e = path.find('.', b);
    std::string part = path.substr(b, e == std::string::npos ? std::string::npos : e - b);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return std::isdigit((unsigned char)c); });
    if (cur.is_undefined()) return cur;
    if (digits && part.size() > 18) in.fail("attribute index '" + part + "' is out of range");
    cur = get_item(in, cur, digits ? Value::integer(std::stoll(part)) : Value::string(part));
    if (e == std::string::npos) return cur;
    b = e + 1;
  }
}

std::string py_format(Interp& in, const std::string& fmt, CallArgs& args) {
  std::string out;
  size_t auto_idx = 0;
  for (size_t k = 0; k < fmt.size(); ++k) {
    char c = fmt[k];
    if (c == '}' ) {
      if (k + 1 < fmt.size() && fmt[k + 1] == '}') ++k;
      out += '}';
      continue;
    }
    if (c != '{') { out += c; continue; }
    if (k + 1 < fmt.size() && fmt[k + 1] == '{') { out += '{'; ++k; continue; }
    size_t e = fmt.find('}', k);
    if (e == std::string::npos) in.fail("Single '{' encountered in format string");
    std::string field = fmt.substr(k + 1, e - k - 1);
    std::string spec;
    if (size_t colon = field.find(':'); colon != std::string::npos) { spec = field.substr(colon + 1); field = field.substr(0, colon); }
    const Value* v = nullptr;
    if (field.empty()) v = auto_idx < args.args.size() ? &args.args[auto_idx++] : nullptr;
    else if (std::isdigit((unsigned char)field[0])) {
      size_t i = 0, n = 0;
      while (n < field.size() && std::isdigit((unsigned char)field[n]) && i < (size_t(1) << 32)) i = i * 10 + (field[n++] - '0');
      if (n != field.size()) in.fail("format: bad field '" + field + "'");
      v = i < args.args.size() ? &args.args[i] : nullptr;
    }
    else v = args.get(field, size_t(-1));
    if (!v) in.fail("format: missing argument '" + field + "'");
    std::string s = to_str(*v);
    if (!spec.empty() && v->kind == Kind::Float && spec.size() >= 2 && spec[0] == '.' && spec.back() == 'f') {
      char buf[64];
      snprintf(buf, sizeof buf, ("%" + spec).c_str(), v->f);
      s = buf;
    }
    out += s;
    k = e;
  }
  return out;
}

}  // namespace ogx::jinja
