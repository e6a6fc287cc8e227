// Value construction, Python-compatible printing, truthiness, equality and ordering.
#include "genai/chat_template/value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"

namespace ogx::jinja {

const Value* ValueDict::find(const std::string& key) const {
  for (auto& kv : items)
    if (kv.first == key) return &kv.second;
  return nullptr;
}
Value* ValueDict::find(const std::string& key) {
  for (auto& kv : items)
    if (kv.first == key) return &kv.second;
  return nullptr;
}
void ValueDict::set(const std::string& key, Value v) {
  if (Value* p = find(key)) *p = std::move(v);
  else items.emplace_back(key, std::move(v));
}

const Value* CallArgs::get(const std::string& name, size_t pos) const {
  for (auto& kv : kwargs)
    if (kv.first == name) return &kv.second;
  return pos < args.size() ? &args[pos] : nullptr;
}

Value Value::undefined(const std::string& name) {
  Value v;
  if (!name.empty()) v.s = std::make_shared<std::string>(name);
  return v;
}
Value Value::none() { Value v; v.kind = Kind::None; return v; }
Value Value::boolean(bool x) { Value v; v.kind = Kind::Bool; v.b = x; return v; }
Value Value::integer(int64_t x) { Value v; v.kind = Kind::Int; v.i = x; return v; }
Value Value::number(double x) { Value v; v.kind = Kind::Float; v.f = x; return v; }
Value Value::string(std::string x) {
  Value v;
  v.kind = Kind::String;
  v.s = std::make_shared<std::string>(std::move(x));
  return v;
}
Value Value::make_list(ValueList x) {
  Value v;
  v.kind = Kind::List;
  v.list = std::make_shared<ValueList>(std::move(x));
  return v;
}
Value Value::make_tuple(ValueList x) {
  Value v = make_list(std::move(x));
  v.is_tuple = true;
  return v;
}
Value Value::make_dict() {
  Value v;
  v.kind = Kind::Dict;
  v.dict = std::make_shared<ValueDict>();
  return v;
}
Value Value::function(std::string name, NativeFn fn) {
  Value v;
  v.kind = Kind::Func;
  v.func = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
  return v;
}

std::string dict_key(const Value& k) {
  switch (k.kind) {
    case Kind::String: return *k.s;
    case Kind::Bool: case Kind::Int: return "\x02i" + std::to_string(k.as_int());
    case Kind::Float:
      if (k.f == (double)(int64_t)k.f) return "\x02i" + std::to_string((int64_t)k.f);
      return "\x02f" + python_float_repr(k.f);
    case Kind::None: return "\x02n";
    default: throw_error("unhashable type: '", type_name(k), "'");
  }
}

Value key_value(const std::string& k) {
  if (k.empty() || k[0] != '\x02') return Value::string(k);
  if (k[1] == 'i') return Value::integer(std::stoll(k.substr(2)));
  if (k[1] == 'f') return Value::number(std::stod(k.substr(2)));
  return Value::none();
}

const char* type_name(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return v.is_tuple ? "tuple" : "list";
    case Kind::Dict: return v.is_namespace ? "Namespace" : "dict";
    case Kind::Func: return "function";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: case Kind::None: return false;
    case Kind::Bool: return v.b;
    case Kind::Int: return v.i != 0;
    case Kind::Float: return v.f != 0;
    case Kind::String: return !v.s->empty();
    case Kind::List: return v.is_generator || !v.list->empty();
    case Kind::Dict: return v.is_namespace || !v.dict->items.empty();
    case Kind::Func: return true;
  }
  return false;
}

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, d);
    if (strtod(buf, nullptr) == d) break;
  }
  std::string m(buf), digits, sign;
  size_t epos = m.find('e');
  int exp = atoi(m.c_str() + epos + 1);
  for (size_t k = 0; k < epos; ++k) {
    if (m[k] == '-') sign = "-";
    else if (m[k] != '.') digits += m[k];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (exp >= -5 && exp < 16) {
    if (exp >= 0) {
      std::string ip = digits.substr(0, std::min<size_t>(digits.size(), exp + 1));
      while ((int)ip.size() < exp + 1) ip += '0';
      std::string fp = (int)digits.size() > exp + 1 ? digits.substr(exp + 1) : "0";
      return sign + ip + "." + fp;
    }
    if (exp >= -4) return sign + "0." + std::string(-exp - 1, '0') + digits;
  }
  std::string out = sign + digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  snprintf(buf, sizeof buf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
  return out + buf;
}

static std::string py_str_repr(const std::string& s) {
  bool has_sq = s.find('\'') != std::string::npos, has_dq = s.find('"') != std::string::npos;
  char q = (has_sq && !has_dq) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == (unsigned char)q) out += std::string("\\") + q;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else out += (char)c;
  }
  return out + q;
}

static std::string repr_depth(const Value& v, int depth);

static std::string seq_repr(const Value& v, int depth) {
  std::string out = v.is_tuple ? "(" : "[";
  for (size_t k = 0; k < v.list->size(); ++k) {
    if (k) out += ", ";
    out += repr_depth((*v.list)[k], depth + 1);
  }
  if (v.is_tuple && v.list->size() == 1) out += ",";
  return out + (v.is_tuple ? ")" : "]");
}

static std::string repr_depth(const Value& v, int depth) {
  if (depth > kMaxDepth) throw_error("value nested too deeply to print");
  switch (v.kind) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return v.b ? "True" : "False";
    case Kind::Int: return std::to_string(v.i);
    case Kind::Float: return python_float_repr(v.f);
    case Kind::String: return py_str_repr(*v.s);
    case Kind::List: return v.is_generator ? "<generator object>" : seq_repr(v, depth);
    case Kind::Dict: {
      if (v.is_namespace) return "<Namespace>";
      std::string out = "{";
      bool first = true;
      for (auto& kv : v.dict->items) {
        if (!first) out += ", ";
        first = false;
        out += repr_depth(key_value(kv.first), depth + 1) + ": " + repr_depth(kv.second, depth + 1);
      }
      return out + "}";
    }
    case Kind::Func: return "<function " + v.func->name + ">";
  }
  return "";
}

std::string repr(const Value& v) { return repr_depth(v, 0); }
std::string to_str(const Value& v) { return v.kind == Kind::String ? *v.s : repr_depth(v, 0); }

static bool equals_depth(const Value& a, const Value& b, int depth) {
  if (depth > kMaxDepth) throw_error("value nested too deeply to compare");
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined: case Kind::None: return true;
    case Kind::String: return *a.s == *b.s;
    case Kind::List: {
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k)
        if (!equals_depth((*a.list)[k], (*b.list)[k], depth + 1)) return false;
      return true;
    }
    case Kind::Dict: {
      if (a.is_namespace || b.is_namespace) return a.dict == b.dict;
      if (a.dict->items.size() != b.dict->items.size()) return false;
      for (auto& kv : a.dict->items) {
        const Value* o = b.dict->find(kv.first);
        if (!o || !equals_depth(kv.second, *o, depth + 1)) return false;
      }
      return true;
    }
    case Kind::Func: return a.func == b.func;
    default: return false;
  }
}
bool equals(const Value& a, const Value& b) { return equals_depth(a, b, 0); }

int compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    double x = a.as_double(), y = b.as_double();
    if (a.kind != Kind::Float && b.kind != Kind::Float) {
      int64_t p = a.as_int(), q = b.as_int();
      return p < q ? -1 : p > q ? 1 : 0;
    }
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.s->compare(*b.s);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list()) {
    size_t n = std::min(a.list->size(), b.list->size());
    for (size_t k = 0; k < n; ++k) {
      int c = compare((*a.list)[k], (*b.list)[k]);
      if (c) return c;
    }
    return a.list->size() < b.list->size() ? -1 : a.list->size() > b.list->size() ? 1 : 0;
  }
  throw_error("'<' not supported between instances of '", type_name(a), "' and '", type_name(b), "'");
}

bool is_ascii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t k = 0; k < s.size();) {
    unsigned char c = s[k];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n = std::min(n, s.size() - k);
    out.push_back(s.substr(k, n));
    k += n;
  }
  return out;
}

size_t length(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return 0;
    case Kind::String: return is_ascii(*v.s) ? v.s->size() : utf8_chars(*v.s).size();
    case Kind::List:
      if (v.is_generator) throw_error("object of type 'generator' has no len()");
      return v.list->size();
    case Kind::Dict: return v.dict->items.size();
    default: throw_error("object of type '", type_name(v), "' has no len()");
  }
}

ValueList iterate(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return {};
    case Kind::List: return *v.list;
    case Kind::Dict: {
      ValueList out;
      for (auto& kv : v.dict->items) out.push_back(key_value(kv.first));
      return out;
    }
    case Kind::String: {
      ValueList out;
      for (auto& c : utf8_chars(*v.s)) out.push_back(Value::string(c));
      return out;
    }
    default: throw_error("'", type_name(v), "' object is not iterable");
  }
}

template <class J>
static Value from_json_t(const J& j, int depth) {
  if (depth > kMaxDepth) throw_error("JSON input nested deeper than ", kMaxDepth);
  if (j.is_null()) return Value::none();
  if (j.is_boolean()) return Value::boolean(j.template get<bool>());
  if (j.is_number_unsigned()) return Value::integer((int64_t)j.template get<uint64_t>());
  if (j.is_number_integer()) return Value::integer(j.template get<int64_t>());
  if (j.is_number_float()) return Value::number(j.template get<double>());
  if (j.is_string()) return Value::string(j.template get<std::string>());
  if (j.is_array()) {
    ValueList items;
    for (auto& e : j) items.push_back(from_json_t(e, depth + 1));
    return Value::make_list(std::move(items));
  }
  Value d = Value::make_dict();
  for (auto it = j.begin(); it != j.end(); ++it) d.dict->set(it.key(), from_json_t(it.value(), depth + 1));
  return d;
}
Value from_json(const nlohmann::ordered_json& j, int depth) { return from_json_t(j, depth); }
Value from_json(const nlohmann::json& j, int depth) { return from_json_t(j, depth); }

}  // namespace ogx::jinja
