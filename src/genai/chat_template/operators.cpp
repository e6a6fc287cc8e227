// Binary operators with Python semantics: + - * / // % ** and ~, and the `in` operator.
#include <cmath>

#include "common/error.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

namespace {
[[noreturn]] void unsupported(Interp& in, const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined()) {
    const Value& u = a.is_undefined() ? a : b;
    in.fail((u.s ? "'" + *u.s + "'" : std::string("value")) + " is undefined");
  }
  in.fail("unsupported operand type(s) for " + op + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Value arith(Interp& in, const std::string& op, const Value& a, const Value& b) {
  bool use_float = a.kind == Kind::Float || b.kind == Kind::Float;
  if (op == "/") {
    if (b.as_double() == 0) in.fail("division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (op == "**") {
    if (!use_float && b.as_int() >= 0) {
      int64_t r = 1, base = a.as_int();
      for (int64_t k = 0; k < b.as_int(); ++k) {
        if (__builtin_mul_overflow(r, base, &r)) in.fail("integer overflow in **");
        if (r == 0 || r == 1) break;
      }
      return Value::integer(r);
    }
    return Value::number(std::pow(a.as_double(), b.as_double()));
  }
  if (use_float) {
    double x = a.as_double(), y = b.as_double();
    if (op == "+") return Value::number(x + y);
    if (op == "-") return Value::number(x - y);
    if (op == "*") return Value::number(x * y);
    if (y == 0) in.fail("float division by zero");
    if (op == "//") return Value::number(std::floor(x / y));
    double m = std::fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return Value::number(m);
  }
  int64_t x = a.as_int(), y = b.as_int(), r = 0;
  bool overflow = false;
  if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
  else if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
  else if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
  else {
    if (y == 0) in.fail("integer division or modulo by zero");
    if (op == "//") r = floordiv(x, y);
    else r = x - floordiv(x, y) * y;
  }
  if (overflow) in.fail("integer overflow");
  return Value::integer(r);
}

Value repeat(Interp& in, const Value& seq, int64_t n) {
  if (seq.is_string()) return Value::string(str_repeat(in, *seq.s, n));
  ValueList out;
  if (n > 0 && !seq.list->empty()) {
    if (n > int64_t(in.limits().max_list_items)) in.check_list(size_t(n));
    in.check_list(seq.list->size() * size_t(n));
  }
  for (int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::make_list(std::move(out));
}
}  // namespace

std::string str_repeat(const Interp& in, const std::string& s, int64_t n) {
  if (n <= 0 || s.empty()) return "";
  if (n > int64_t(in.limits().max_output) || s.size() * size_t(n) > in.limits().max_output) in.fail("string exceeds the size limit");
  std::string out;
  out.reserve(s.size() * n);
  for (int64_t k = 0; k < n; ++k) out += s;
  return out;
}

Value binary_op(Interp& in, const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    std::string r = to_str(a) + to_str(b);
    in.check_size(r.size());
    return Value::string(std::move(r));
  }
  if (a.is_number() && b.is_number()) return arith(in, op, a, b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      in.check_size(a.s->size() + b.s->size());
      if (a.is_markup == b.is_markup) {
        Value r = Value::string(*a.s + *b.s);
        r.is_markup = a.is_markup;
        return r;
      }
      Value r = Value::string(a.is_markup ? *a.s + html_escape(*b.s) : html_escape(*a.s) + *b.s);
      r.is_markup = true;
      return r;
    }
    if (a.is_list() && b.is_list()) {
      in.check_list(a.list->size() + b.list->size());
      ValueList r = *a.list;
      r.insert(r.end(), b.list->begin(), b.list->end());
      Value out = Value::make_list(std::move(r));
      out.is_tuple = a.is_tuple;
      return out;
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && b.is_number() && b.kind != Kind::Float) return repeat(in, a, b.as_int());
    if ((b.is_string() || b.is_list()) && a.is_number() && a.kind != Kind::Float) return repeat(in, b, a.as_int());
  }
  if (op == "%" && a.is_string()) {
    ValueList args;
    if (b.is_list() && b.is_tuple) args = *b.list;
    else args.push_back(b);
    return Value::string(py_percent(in, *a.s, args, b));
  }
  unsupported(in, op, a, b);
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case Kind::Undefined: return false;
    case Kind::String:
      if (!item.is_string()) throw_error("'in <string>' requires string as left operand, not ", type_name(item));
      return container.s->find(*item.s) != std::string::npos;
    case Kind::List:
      for (auto& v : *container.list)
        if (equals(v, item)) return true;
      return false;
    case Kind::Dict:
      if (!item.is_string() && !item.is_number() && !item.is_none()) return false;
      return container.dict->find(dict_key(item)) != nullptr;
    default: throw_error("argument of type '", type_name(container), "' is not iterable");
  }
}

}  // namespace ogx::jinja
