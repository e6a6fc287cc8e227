// Jinja2's builtin tests (`x is defined`, `x is string`, `n is divisibleby 3`, ...).
#include <unordered_map>

#include "common/error.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

namespace {
using TestFn = bool (*)(Interp&, const Value&, CallArgs&);

const Value& need(Interp& in, CallArgs& a, const char* test) {
  if (a.args.empty()) in.fail(std::string("test '") + test + "' needs an argument");
  return a.args[0];
}

int cmp(Interp& in, const Value& a, const Value& b) {
  try {
    return compare(a, b);
  } catch (const Error& e) {
    in.fail(e.what());
  }
}

bool sameas(const Value& v, const Value& o) {
  if (v.kind != o.kind) return false;
  switch (v.kind) {
    case Kind::None: case Kind::Undefined: return true;
    case Kind::Bool: return v.b == o.b;
    case Kind::Int: return v.i == o.i;
    case Kind::Float: return false;
    case Kind::String: return v.s == o.s;
    case Kind::List: return v.list == o.list;
    case Kind::Dict: return v.dict == o.dict;
    case Kind::Func: return v.func == o.func;
  }
  return false;
}

bool int_of(Interp& in, const Value& v, const char* test, int64_t* out) {
  if (v.kind != Kind::Int && v.kind != Kind::Bool) {
    if (v.kind == Kind::Float) in.fail(std::string("test '") + test + "' needs an integer");
    in.fail(std::string("test '") + test + "': unsupported type " + type_name(v));
  }
  *out = v.as_int();
  return true;
}

const std::unordered_map<std::string, TestFn>& registry() {
  static const std::unordered_map<std::string, TestFn> m = {
      {"defined", [](Interp&, const Value& v, CallArgs&) { return !v.is_undefined(); }},
      {"undefined", [](Interp&, const Value& v, CallArgs&) { return v.is_undefined(); }},
      {"none", [](Interp&, const Value& v, CallArgs&) { return v.is_none(); }},
      {"string", [](Interp&, const Value& v, CallArgs&) { return v.is_string(); }},
      {"number", [](Interp&, const Value& v, CallArgs&) { return v.is_number(); }},
      {"integer", [](Interp&, const Value& v, CallArgs&) { return v.kind == Kind::Int; }},
      {"float", [](Interp&, const Value& v, CallArgs&) { return v.kind == Kind::Float; }},
      {"boolean", [](Interp&, const Value& v, CallArgs&) { return v.kind == Kind::Bool; }},
      {"true", [](Interp&, const Value& v, CallArgs&) { return v.kind == Kind::Bool && v.b; }},
      {"false", [](Interp&, const Value& v, CallArgs&) { return v.kind == Kind::Bool && !v.b; }},
      {"mapping", [](Interp&, const Value& v, CallArgs&) { return v.is_dict(); }},
      {"iterable", [](Interp&, const Value& v, CallArgs&) { return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined(); }},
      {"sequence", [](Interp&, const Value& v, CallArgs&) { return v.is_list() || v.is_dict() || v.is_string(); }},
      {"callable", [](Interp&, const Value& v, CallArgs&) { return v.kind == Kind::Func; }},
      {"lower", [](Interp&, const Value& v, CallArgs&) { return v.is_string() && py_lower(*v.s) == *v.s; }},
      {"upper", [](Interp&, const Value& v, CallArgs&) { return v.is_string() && py_upper(*v.s) == *v.s; }},
      {"escaped", [](Interp&, const Value&, CallArgs&) { return false; }},
      {"odd", [](Interp& in, const Value& v, CallArgs&) { int64_t i; int_of(in, v, "odd", &i); return (i % 2) != 0; }},
      {"even", [](Interp& in, const Value& v, CallArgs&) { int64_t i; int_of(in, v, "even", &i); return (i % 2) == 0; }},
      {"divisibleby", [](Interp& in, const Value& v, CallArgs& a) {
         int64_t i, d;
         int_of(in, v, "divisibleby", &i);
         int_of(in, need(in, a, "divisibleby"), "divisibleby", &d);
         if (d == 0) in.fail("integer division or modulo by zero");
         return i % d == 0;
       }},
      {"in", [](Interp& in, const Value& v, CallArgs& a) {
         try {
           return contains(need(in, a, "in"), v);
         } catch (const Error& e) {
           in.fail(e.what());
         }
       }},
      {"eq", [](Interp& in, const Value& v, CallArgs& a) { return equals(v, need(in, a, "eq")); }},
      {"ne", [](Interp& in, const Value& v, CallArgs& a) { return !equals(v, need(in, a, "ne")); }},
      {"lt", [](Interp& in, const Value& v, CallArgs& a) { return cmp(in, v, need(in, a, "lt")) < 0; }},
      {"le", [](Interp& in, const Value& v, CallArgs& a) { return cmp(in, v, need(in, a, "le")) <= 0; }},
      {"gt", [](Interp& in, const Value& v, CallArgs& a) { return cmp(in, v, need(in, a, "gt")) > 0; }},
      {"ge", [](Interp& in, const Value& v, CallArgs& a) { return cmp(in, v, need(in, a, "ge")) >= 0; }},
      {"sameas", [](Interp& in, const Value& v, CallArgs& a) { return sameas(v, need(in, a, "sameas")); }},
      {"filter", [](Interp&, const Value& v, CallArgs&) { return v.is_string() && has_filter(*v.s); }},
      {"test", [](Interp&, const Value& v, CallArgs&) { return v.is_string() && has_test(*v.s); }},
  };
  return m;
}

const std::unordered_map<std::string, std::string> kAliases = {
    {"equalto", "eq"}, {"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {"lessthan", "lt"}, {"<=", "le"},
    {">", "gt"}, {"greaterthan", "gt"}, {">=", "ge"}};

const std::string& canonical(const std::string& name) {
  auto it = kAliases.find(name);
  return it == kAliases.end() ? name : it->second;
}
}  // namespace

bool has_test(const std::string& name) { return registry().count(canonical(name)) != 0; }

bool apply_test(Interp& in, const std::string& name, const Value& v, CallArgs& args) {
  auto it = registry().find(canonical(name));
  if (it == registry().end()) in.fail("no test named '" + name + "'");
  return it->second(in, v, args);
}

}  // namespace ogx::jinja
