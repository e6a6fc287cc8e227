// Global functions: Jinja2's range, dict, namespace, cycler, joiner, and transformers' raise_exception and
// strftime_now.
#include <ctime>

#include "common/error.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

namespace {
Value range_fn(Interp& in, CallArgs& a) {
  if (a.args.empty() || a.args.size() > 3) in.fail("range expected 1 to 3 arguments");
  for (auto& v : a.args)
    if (v.kind != Kind::Int && v.kind != Kind::Bool) in.fail(std::string("'") + type_name(v) + "' object cannot be interpreted as an integer");
  int64_t start = 0, stop, step = 1;
  if (a.args.size() == 1) stop = a.args[0].as_int();
  else {
    start = a.args[0].as_int();
    stop = a.args[1].as_int();
    if (a.args.size() == 3) step = a.args[2].as_int();
  }
  if (step == 0) in.fail("range() arg 3 must not be zero");
  // 128-bit arithmetic: range(-2**62, 2**62) must not overflow while its length is computed.
  const __int128 span = step > 0 ? (__int128)stop - start : (__int128)start - stop;
  const __int128 st = step > 0 ? (__int128)step : -(__int128)step;
  const __int128 len = span > 0 ? (span + st - 1) / st : 0;
  if (len > in.limits().max_range) in.fail("range too large");
  const int64_t n = (int64_t)len;
  in.check_list((size_t)n);
  ValueList out;
  for (int64_t k = 0; k < n; ++k) out.push_back(Value::integer(start + k * step));
  return Value::make_list(std::move(out));
}

Value dict_fn(CallArgs& a, bool ns) {
  Value d = Value::make_dict();
  d.is_namespace = ns;
  for (auto& v : a.args) {
    if (v.is_dict())
      for (auto& kv : v.dict->items) d.dict->set(kv.first, kv.second);
  }
  for (auto& kv : a.kwargs) d.dict->set(kv.first, kv.second);
  return d;
}

Value cycler_fn(CallArgs& a) {
  auto items = std::make_shared<ValueList>(a.args);
  auto pos = std::make_shared<size_t>(0);
  Value c = Value::make_dict();
  c.dict->set("next", Value::function("next", [items, pos](CallArgs&) {
    if (items->empty()) return Value::none();
    Value v = (*items)[*pos % items->size()];
    ++*pos;
    return v;
  }));
  c.dict->set("reset", Value::function("reset", [pos](CallArgs&) {
    *pos = 0;
    return Value::none();
  }));
  return c;
}

Value joiner_fn(CallArgs& a) {
  std::string sep = a.args.empty() ? ", " : to_str(a.args[0]);
  auto used = std::make_shared<bool>(false);
  return Value::function("joiner", [sep, used](CallArgs&) {
    if (!*used) {
      *used = true;
      return Value::string("");
    }
    return Value::string(sep);
  });
}
}  // namespace

void add_globals(Interp& in, Scope& g) {
  Interp* ip = &in;
  g.vars["range"] = Value::function("range", [ip](CallArgs& a) { return range_fn(*ip, a); });
  g.vars["dict"] = Value::function("dict", [](CallArgs& a) { return dict_fn(a, false); });
  g.vars["namespace"] = Value::function("namespace", [](CallArgs& a) { return dict_fn(a, true); });
  g.vars["cycler"] = Value::function("cycler", [](CallArgs& a) { return cycler_fn(a); });
  g.vars["joiner"] = Value::function("joiner", [](CallArgs& a) { return joiner_fn(a); });
  g.vars["raise_exception"] = Value::function("raise_exception", [ip](CallArgs& a) -> Value {
    ip->fail("raise_exception: " + (a.args.empty() ? std::string() : to_str(a.args[0])));
  });
  g.vars["strftime_now"] = Value::function("strftime_now", [](CallArgs& a) {
    std::string fmt = a.args.empty() ? "" : to_str(a.args[0]);
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[256];
    size_t n = std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
    return Value::string(std::string(buf, n));
  });
}

}  // namespace ogx::jinja
