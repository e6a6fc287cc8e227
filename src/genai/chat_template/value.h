// Value: the dynamic value type of the Jinja interpreter, modelled on the Python objects Jinja2 works with
// (None, bool, int, float, str, list, dict, callables, Undefined). Lists and dicts have reference semantics
// like Python; dicts keep insertion order.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ogx::jinja {

struct Value;
using ValueList = std::vector<Value>;

// Insertion-ordered string-keyed map (JSON object keys are strings; so are all keys templates use).
struct ValueDict {
  std::vector<std::pair<std::string, Value>> items;
  const Value* find(const std::string& key) const;
  Value* find(const std::string& key);
  void set(const std::string& key, Value v);
};

// Arguments of a call: positional then keyword.
struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  // Named or positional argument `name` at `pos`; nullptr when absent.
  const Value* get(const std::string& name, size_t pos) const;
};

using NativeFn = std::function<Value(CallArgs&)>;
struct Callable {
  std::string name;
  NativeFn fn;
};

enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Func };

struct Value {
  Kind kind = Kind::Undefined;
  bool b = false;
  bool is_tuple = false;      // List printed as a tuple
  bool is_namespace = false;  // Dict created by namespace(): attributes assignable
  bool is_generator = false;  // List produced lazily in Python (map/select/...): always truthy, no len()/JSON
  bool is_markup = false;     // String marked safe (Markup): `+` escapes plain strings joined to it
  int64_t i = 0;
  double f = 0;
  std::shared_ptr<std::string> s;  // String, or the name of an Undefined (may be null)
  std::shared_ptr<ValueList> list;
  std::shared_ptr<ValueDict> dict;
  std::shared_ptr<Callable> func;

  Value() = default;
  static Value undefined(const std::string& name = "");
  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value number(double v);
  static Value string(std::string v);
  static Value make_list(ValueList v = {});
  static Value make_tuple(ValueList v);
  static Value make_dict();
  static Value function(std::string name, NativeFn fn);

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_list() const { return kind == Kind::List; }
  bool is_dict() const { return kind == Kind::Dict; }
  const std::string& str() const { return *s; }
  double as_double() const { return kind == Kind::Float ? f : double(kind == Kind::Bool ? b : i); }
  int64_t as_int() const { return kind == Kind::Bool ? int64_t(b) : i; }
};

// Dict keys are strings; other keys (ints, None, ...) are stored encoded with a \x02 prefix.
std::string dict_key(const Value& k);
Value key_value(const std::string& k);
const char* type_name(const Value& v);
bool truthy(const Value& v);
// str(v) as Python prints it ({{ v }}): None, True, 1.0, ['a', 1], {'k': 'v'}; Undefined → "".
std::string to_str(const Value& v);
// repr(v): strings quoted like Python.
std::string repr(const Value& v);
std::string python_float_repr(double d);
bool equals(const Value& a, const Value& b);
// Python ordering; throws on incomparable types.
int compare(const Value& a, const Value& b);
// Number of items (code points for strings); throws when the value has no length.
size_t length(const Value& v);
// Items of an iterable (dict → keys, string → characters, Undefined → empty); throws otherwise.
ValueList iterate(const Value& v);

Value from_json(const nlohmann::ordered_json& j, int depth = 0);
Value from_json(const nlohmann::json& j, int depth = 0);
// json.dumps(v, ensure_ascii=False, indent, separators, sort_keys) as Python writes it.
struct JsonFormat {
  int indent = -1;  // -1: none
  std::string item_sep = ", ", key_sep = ": ";
  bool sort_keys = false;
};
std::string to_json(const Value& v, const JsonFormat& fmt);
std::string json_quote(const std::string& s);

// UTF-8 helpers: strings index by code point as Python does.
std::vector<std::string> utf8_chars(const std::string& s);
bool is_ascii(const std::string& s);

constexpr int kMaxDepth = 400;  // nesting of values, expressions and calls
}  // namespace ogx::jinja
