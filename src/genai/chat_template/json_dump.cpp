// to_json: Python's json.dumps(ensure_ascii=False) byte for byte (separators, indent, sort_keys, float repr).
#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "genai/chat_template/value.h"

namespace ogx::jinja {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += (char)c;
        }
    }
  }
  return out + "\"";
}

namespace {
struct Writer {
  const JsonFormat& fmt;
  std::string out;

  void newline(int level) {
    if (fmt.indent < 0) return;
    out += '\n';
    out.append(size_t(fmt.indent) * level, ' ');
  }
  void number(const Value& v) {
    if (v.kind == Kind::Int) { out += std::to_string(v.i); return; }
    std::string r = python_float_repr(v.f);
    out += r == "nan" ? "NaN" : r == "inf" ? "Infinity" : r == "-inf" ? "-Infinity" : r;
  }
  void list(const Value& v, int level) {
    if (v.list->empty()) { out += "[]"; return; }
    out += '[';
    for (size_t k = 0; k < v.list->size(); ++k) {
      if (k) out += fmt.item_sep;
      newline(level + 1);
      write((*v.list)[k], level + 1);
    }
    newline(level);
    out += ']';
  }
  void dict(const Value& v, int level) {
    if (v.is_namespace) throw_error("Object of type Namespace is not JSON serializable");
    if (v.dict->items.empty()) { out += "{}"; return; }
    std::vector<const std::pair<std::string, Value>*> items;
    for (auto& kv : v.dict->items) items.push_back(&kv);
    if (fmt.sort_keys)
      std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
    out += '{';
    for (size_t k = 0; k < items.size(); ++k) {
      if (k) out += fmt.item_sep;
      newline(level + 1);
      Value key = key_value(items[k]->first);
      std::string ks = key.is_string() ? *key.s : key.is_none() ? "null" : to_str(key);
      out += json_quote(ks) + fmt.key_sep;
      write(items[k]->second, level + 1);
    }
    newline(level);
    out += '}';
  }
  void write(const Value& v, int level) {
    if (level > kMaxDepth) throw_error("value nested too deeply for tojson");
    switch (v.kind) {
      case Kind::None: out += "null"; break;
      case Kind::Bool: out += v.b ? "true" : "false"; break;
      case Kind::Int: case Kind::Float: number(v); break;
      case Kind::String: out += json_quote(*v.s); break;
      case Kind::List:
        if (v.is_generator) throw_error("Object of type generator is not JSON serializable");
        list(v, level);
        break;
      case Kind::Dict: dict(v, level); break;
      default: throw_error("Object of type ", type_name(v), " is not JSON serializable");
    }
  }
};
}  // namespace

std::string to_json(const Value& v, const JsonFormat& fmt) {
  Writer w{fmt, {}};
  w.write(v, 0);
  return std::move(w.out);
}

}  // namespace ogx::jinja
