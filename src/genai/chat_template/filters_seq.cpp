// Sequence filters of Jinja2 (first, last, join, map, select*, reject*, sort, unique, dictsort, sum, min, max,
// batch, items, ...) and the filter registry entry points.
#include <algorithm>

#include "common/error.h"
#include "genai/chat_template/filters_impl.h"

namespace ogx::jinja {

namespace {

ValueList items_of(Interp& in, const Value& v) {
  try {
    return iterate(v);
  } catch (const Error& e) {
    in.fail(e.what());
  }
}

std::string attr_name(const Value* v) { return v && !v->is_none() && !v->is_undefined() ? to_str(*v) : ""; }

Value f_first(Interp& in, const Value& v, CallArgs&) {
  ValueList items = items_of(in, v);
  return items.empty() ? Value::undefined("first") : items.front();
}
Value f_last(Interp& in, const Value& v, CallArgs&) {
  if (v.is_generator) in.fail("'generator' object is not reversible");
  ValueList items = items_of(in, v);
  return items.empty() ? Value::undefined("last") : items.back();
}

Value f_join(Interp& in, const Value& v, CallArgs& a) {
  const Value* d = a.get("d", 0);
  std::string attr = attr_name(a.get("attribute", 1));
  std::string sep = d ? to_str(*d) : "", out;
  bool first = true;
  for (auto& x : items_of(in, v)) {
    if (!first) out += sep;
    first = false;
    out += to_str(attr.empty() ? x : get_attribute_path(in, x, attr));
    in.check_size(out.size());
  }
  return Value::string(std::move(out));
}

Value f_list(Interp& in, const Value& v, CallArgs&) { return Value::make_list(items_of(in, v)); }

Value f_reverse(Interp& in, const Value& v, CallArgs&) {
  if (v.is_string()) return py_slice(v, Value::none(), Value::none(), Value::integer(-1));
  ValueList items = items_of(in, v);
  std::reverse(items.begin(), items.end());
  return Value::make_list(std::move(items));
}

Value generator(ValueList items) {
  Value g = Value::make_list(std::move(items));
  g.is_generator = true;
  return g;
}

Value f_map(Interp& in, const Value& v, CallArgs& a) {
  ValueList out;
  if (!truthy(v)) return generator({});
  const Value* attr = a.get("attribute", size_t(-1));
  if (attr) {
    const Value* def = a.get("default", size_t(-1));
    for (auto& x : items_of(in, v)) {
      Value r = get_attribute_path(in, x, to_str(*attr));
      out.push_back(r.is_undefined() && def ? *def : r);
    }
    return generator(std::move(out));
  }
  if (a.args.empty()) in.fail("map filter needs a filter name or attribute=");
  std::string name = to_str(a.args[0]);
  if (!has_filter(name)) in.fail("no filter named '" + name + "'");
  CallArgs rest;
  rest.args.assign(a.args.begin() + 1, a.args.end());
  rest.kwargs = a.kwargs;
  for (auto& x : items_of(in, v)) {
    CallArgs c = rest;
    out.push_back(apply_filter(in, name, x, c));
  }
  return generator(std::move(out));
}

// select / reject / selectattr / rejectattr
Value select_impl(Interp& in, const Value& v, CallArgs& a, bool by_attr, bool want) {
  size_t at = 0;
  std::string attr;
  if (by_attr) {
    if (a.args.empty()) in.fail("selectattr/rejectattr need an attribute");
    attr = to_str(a.args[at++]);
  }
  std::string test = a.args.size() > at ? to_str(a.args[at++]) : "";
  if (!test.empty() && !has_test(test) && truthy(v)) in.fail("no test named '" + test + "'");
  CallArgs targs;
  targs.args.assign(a.args.begin() + std::min(at, a.args.size()), a.args.end());
  targs.kwargs = a.kwargs;
  ValueList out;
  if (!truthy(v)) return generator({});
  for (auto& x : items_of(in, v)) {
    Value subject = by_attr ? get_attribute_path(in, x, attr) : x;
    CallArgs c = targs;
    bool r = test.empty() ? truthy(subject) : apply_test(in, test, subject, c);
    if (r == want) out.push_back(x);
  }
  return generator(std::move(out));
}
Value f_select(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interp& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, false); }

Value sort_key(Interp& in, const Value& x, const std::string& attr, bool case_sensitive) {
  Value k = attr.empty() ? x : get_attribute_path(in, x, attr);
  if (!case_sensitive && k.is_string()) return Value::string(py_lower(*k.s));
  return k;
}

int checked_compare(Interp& in, const Value& a, const Value& b) {
  try {
    return compare(a, b);
  } catch (const Error& e) {
    in.fail(e.what());
  }
}

Value f_sort(Interp& in, const Value& v, CallArgs& a) {
  const Value* rev = a.get("reverse", 0);
  const Value* cs = a.get("case_sensitive", 1);
  std::string attr = attr_name(a.get("attribute", 2));
  bool case_sensitive = cs && truthy(*cs), reverse = rev && truthy(*rev);
  ValueList items = items_of(in, v);
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& x : items) keyed.emplace_back(sort_key(in, x, attr, case_sensitive), x);
  std::stable_sort(keyed.begin(), keyed.end(), [&](auto& p, auto& q) {
    int c = checked_compare(in, p.first, q.first);
    return reverse ? c > 0 : c < 0;
  });
  ValueList out;
  for (auto& p : keyed) out.push_back(p.second);
  return Value::make_list(std::move(out));
}

Value f_dictsort(Interp& in, const Value& v, CallArgs& a) {
  if (!v.is_dict()) in.fail("dictsort filter needs a mapping");
  const Value* cs = a.get("case_sensitive", 0);
  const Value* by = a.get("by", 1);
  const Value* rev = a.get("reverse", 2);
  bool case_sensitive = cs && truthy(*cs), reverse = rev && truthy(*rev);
  int pos = by && by->is_string() && *by->s == "value" ? 1 : 0;
  ValueList out;
  for (auto& kv : v.dict->items) out.push_back(Value::make_tuple({key_value(kv.first), kv.second}));
  std::stable_sort(out.begin(), out.end(), [&](const Value& p, const Value& q) {
    int c = checked_compare(in, sort_key(in, (*p.list)[pos], "", case_sensitive), sort_key(in, (*q.list)[pos], "", case_sensitive));
    return reverse ? c > 0 : c < 0;
  });
  return Value::make_list(std::move(out));
}

Value f_unique(Interp& in, const Value& v, CallArgs& a) {
  const Value* cs = a.get("case_sensitive", 0);
  std::string attr = attr_name(a.get("attribute", 1));
  bool case_sensitive = cs && truthy(*cs);
  ValueList out, seen;
  for (auto& x : items_of(in, v)) {
    Value k = sort_key(in, x, attr, case_sensitive);
    if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); })) continue;
    seen.push_back(k);
    out.push_back(x);
  }
  return Value::make_list(std::move(out));
}

Value min_max(Interp& in, const Value& v, CallArgs& a, bool want_max) {
  const Value* cs = a.get("case_sensitive", 0);
  std::string attr = attr_name(a.get("attribute", 1));
  bool case_sensitive = cs && truthy(*cs);
  ValueList items = items_of(in, v);
  if (items.empty()) return Value::undefined(want_max ? "max" : "min");
  size_t best = 0;
  for (size_t k = 1; k < items.size(); ++k) {
    int c = checked_compare(in, sort_key(in, items[k], attr, case_sensitive), sort_key(in, items[best], attr, case_sensitive));
    if (want_max ? c > 0 : c < 0) best = k;
  }
  return items[best];
}
Value f_min(Interp& in, const Value& v, CallArgs& a) { return min_max(in, v, a, false); }
Value f_max(Interp& in, const Value& v, CallArgs& a) { return min_max(in, v, a, true); }

Value f_sum(Interp& in, const Value& v, CallArgs& a) {
  std::string attr = attr_name(a.get("attribute", 0));
  const Value* start = a.get("start", 1);
  Value total = start ? *start : Value::integer(0);
  for (auto& x : items_of(in, v)) total = binary_op(in, "+", total, attr.empty() ? x : get_attribute_path(in, x, attr));
  return total;
}

Value f_batch(Interp& in, const Value& v, CallArgs& a) {
  const Value* n = a.get("linecount", 0);
  const Value* fill = a.get("fill_with", 1);
  int64_t count = n && n->is_number() ? n->as_int() : 0;
  if (count <= 0) in.fail("batch size must be positive");
  ValueList out, cur;
  for (auto& x : items_of(in, v)) {
    cur.push_back(x);
    if ((int64_t)cur.size() == count) {
      out.push_back(Value::make_list(std::move(cur)));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill && !fill->is_none())
      while ((int64_t)cur.size() < count) cur.push_back(*fill);
    out.push_back(Value::make_list(std::move(cur)));
  }
  return Value::make_list(std::move(out));
}

Value f_items(Interp& in, const Value& v, CallArgs&) {
  if (v.is_undefined()) return Value::make_list();
  if (!v.is_dict()) in.fail("items filter needs a mapping");
  ValueList out;
  for (auto& kv : v.dict->items) out.push_back(Value::make_tuple({key_value(kv.first), kv.second}));
  return Value::make_list(std::move(out));
}

Value f_attr(Interp& in, const Value& v, CallArgs& a) {
  const Value* name = a.get("name", 0);
  if (!name) in.fail("attr filter needs a name");
  return get_attr(in, v, to_str(*name));
}

const FilterMap& registry() {
  static const FilterMap m = [] {
    FilterMap r;
    register_scalar_filters(r);
    register_sequence_filters(r);
    return r;
  }();
  return m;
}

}  // namespace

void register_sequence_filters(FilterMap& m) {
  m["first"] = f_first;
  m["last"] = f_last;
  m["join"] = f_join;
  m["list"] = f_list;
  m["reverse"] = f_reverse;
  m["map"] = f_map;
  m["select"] = f_select;
  m["reject"] = f_reject;
  m["selectattr"] = f_selectattr;
  m["rejectattr"] = f_rejectattr;
  m["sort"] = f_sort;
  m["dictsort"] = f_dictsort;
  m["unique"] = f_unique;
  m["min"] = f_min;
  m["max"] = f_max;
  m["sum"] = f_sum;
  m["batch"] = f_batch;
  m["items"] = f_items;
  m["attr"] = f_attr;
}

bool has_filter(const std::string& name) { return registry().count(name) != 0; }

Value apply_filter(Interp& in, const std::string& name, const Value& v, CallArgs& args) {
  auto it = registry().find(name);
  if (it == registry().end()) in.fail("no filter named '" + name + "'");
  return it->second(in, v, args);
}

}  // namespace ogx::jinja
