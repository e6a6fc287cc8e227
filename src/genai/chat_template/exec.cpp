// Statement execution: output, if, for (loop object, filtering, else, break/continue), set, macros, call
// and filter blocks. Scoping follows Jinja2: for loops and macros get their own scope; if does not.
#include "common/error.h"
#include "genai/chat_template/interp.h"

namespace ogx::jinja {

namespace {
ScopePtr child(const ScopePtr& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}
}  // namespace

Flow Interp::exec(const Body& body, const ScopePtr& scope, std::string& out) {
  for (auto& n : body) {
    Flow f = exec_node(*n, scope, out);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

Flow Interp::exec_node(const Node& n, const ScopePtr& scope, std::string& out) {
  line_ = n.line;
  step();
  switch (n.type) {
    case NodeType::Text: out += n.text; break;
    case NodeType::Output: {
      Value v = eval(*n.expr, scope);
      out += to_str(v);
      break;
    }
    case NodeType::If: {
      Flow flow = Flow::Normal;
      exec_if(n, scope, out, flow);
      return flow;
    }
    case NodeType::For: return exec_for(n, scope, out);
    case NodeType::Set: exec_set(n, scope); break;
    case NodeType::Macro: scope->vars[n.text] = make_macro(n, scope, n.text); break;
    case NodeType::CallBlock: exec_call_block(n, scope, out); break;
    case NodeType::FilterBlock: {
      std::string body;
      auto s = child(scope);
      exec(n.body, s, body);
      s->vars[kFilterBodyVar] = Value::string(std::move(body));
      out += to_str(eval(*n.expr, s));
      break;
    }
    case NodeType::Break: return Flow::Break;
    case NodeType::Continue: return Flow::Continue;
    case NodeType::Body: return exec(n.body, scope, out);
  }
  check_size(out.size());
  return Flow::Normal;
}

void Interp::exec_if(const Node& n, const ScopePtr& scope, std::string& out, Flow& flow) {
  for (auto& br : n.branches) {
    line_ = br.first->line;
    if (truthy(eval(*br.first, scope))) {
      flow = exec(br.second, scope, out);
      return;
    }
  }
  flow = exec(n.else_body, scope, out);
}

void Interp::bind(const std::vector<std::string>& targets, const Value& v, Scope& scope) {
  if (targets.size() == 1) {
    scope.vars[targets[0]] = v;
    return;
  }
  if (!v.is_list() && !v.is_string()) fail(std::string("cannot unpack non-iterable ") + type_name(v) + " object");
  ValueList items = iterate(v);
  if (items.size() != targets.size())
    fail("cannot unpack " + std::to_string(items.size()) + " values into " + std::to_string(targets.size()) + " names");
  for (size_t k = 0; k < targets.size(); ++k) scope.vars[targets[k]] = items[k];
}

namespace {
Value loop_object(const ValueList& items, size_t k, int depth, const Value& recurse) {
  Value loop = Value::make_dict();
  int64_t n = (int64_t)items.size(), i = (int64_t)k;
  auto& d = *loop.dict;
  d.set("index", Value::integer(i + 1));
  d.set("index0", Value::integer(i));
  d.set("revindex", Value::integer(n - i));
  d.set("revindex0", Value::integer(n - i - 1));
  d.set("first", Value::boolean(i == 0));
  d.set("last", Value::boolean(i == n - 1));
  d.set("length", Value::integer(n));
  d.set("depth", Value::integer(depth));
  d.set("depth0", Value::integer(depth - 1));
  d.set("previtem", k > 0 ? items[k - 1] : Value::undefined("previtem"));
  d.set("nextitem", i + 1 < n ? items[k + 1] : Value::undefined("nextitem"));
  d.set("cycle", Value::function("cycle", [i](CallArgs& a) {
    if (a.args.empty()) throw_error("no items for cycling given");
    return a.args[size_t(i) % a.args.size()];
  }));
  if (!recurse.is_undefined()) d.set("__call__", recurse);
  return loop;
}
}  // namespace

Flow Interp::exec_for(const Node& n, const ScopePtr& scope, std::string& out) {
  Value iterable = eval(*n.expr, scope);
  line_ = n.line;
  ValueList all;
  try {
    all = iterate(iterable);
  } catch (const Error& err) {
    fail(err.what());
  }
  ValueList items;
  if (n.cond) {
    for (auto& v : all) {
      auto s = child(scope);
      bind(n.targets, v, *s);
      if (truthy(eval(*n.cond, s))) items.push_back(v);
    }
  } else {
    items = std::move(all);
  }
  if (items.empty()) {
    auto s = child(scope);
    exec(n.else_body, s, out);
    return Flow::Normal;
  }
  for (size_t k = 0; k < items.size(); ++k) {
    step();
    auto s = child(scope);
    s->vars["loop"] = loop_object(items, k, 1, Value::undefined());
    bind(n.targets, items[k], *s);
    Flow f = exec(n.body, s, out);
    check_size(out.size());
    if (f == Flow::Break) break;
  }
  return Flow::Normal;
}

void Interp::exec_set(const Node& n, const ScopePtr& scope) {
  Value v;
  if (n.recursive) {  // block set: {% set x %}...{% endset %}, optionally {% set x | filter %}
    std::string body;
    exec(n.body, scope, body);
    if (n.expr) {
      auto s = child(scope);
      s->vars[kFilterBodyVar] = Value::string(std::move(body));
      v = eval(*n.expr, s);
    } else {
      v = Value::string(std::move(body));
    }
  } else {
    v = eval(*n.expr, scope);
  }
  line_ = n.line;
  if (!n.text.empty()) {
    Value* ns = scope->lookup(n.targets[0]);
    if (!ns || !ns->is_dict() || !ns->is_namespace) fail("can only assign attributes of a namespace object");
    ns->dict->set(n.text, v);
    return;
  }
  bind(n.targets, v, *scope);
}

Value Interp::make_macro(const Node& n, const ScopePtr& def_scope, const std::string& name) {
  const Node* node = &n;
  std::weak_ptr<Scope> weak = def_scope;
  return Value::function(name, [this, node, weak, name](CallArgs& a) -> Value {
    ScopePtr parent = weak.lock();
    auto s = std::make_shared<Scope>();
    s->parent = parent;
    const auto& params = node->params;
    ValueList varargs;
    for (size_t k = 0; k < a.args.size(); ++k) {
      if (k < params.size()) s->vars[params[k].name] = a.args[k];
      else varargs.push_back(a.args[k]);
    }
    Value kwargs = Value::make_dict();
    for (auto& kv : a.kwargs) {
      bool is_param = false;
      for (auto& p : params) is_param = is_param || p.name == kv.first;
      if (is_param) s->vars[kv.first] = kv.second;
      else if (kv.first != "caller") kwargs.dict->set(kv.first, kv.second);
      else s->vars["caller"] = kv.second;
    }
    for (auto& p : params) {
      if (s->vars.count(p.name)) continue;
      s->vars[p.name] = p.default_value ? eval(*p.default_value, s) : Value::undefined(p.name);
    }
    s->vars["varargs"] = Value::make_list(std::move(varargs));
    s->vars["kwargs"] = kwargs;
    std::string out;
    int saved = line_;
    exec(node->body, s, out);
    line_ = saved;
    return Value::string(std::move(out));
  });
}

void Interp::exec_call_block(const Node& n, const ScopePtr& scope, std::string& out) {
  Value caller = make_macro(n, scope, "caller");
  const Expr& call_expr = *n.expr;
  Value fn = eval(*call_expr.items[0], scope);
  CallArgs args;
  for (size_t k = 1; k < call_expr.items.size(); ++k) args.args.push_back(eval(*call_expr.items[k], scope));
  for (auto& kv : call_expr.kwargs) args.kwargs.emplace_back(kv.first, eval(*kv.second, scope));
  args.kwargs.emplace_back("caller", caller);
  line_ = n.line;
  out += to_str(call(fn, args));
}

}  // namespace ogx::jinja
