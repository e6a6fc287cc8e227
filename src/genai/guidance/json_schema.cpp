#include "genai/guidance/json_schema.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_limits.h"
#include "genai/guidance/json_formats.h"
#include "genai/guidance/number_range.h"

namespace ogx::genai::guidance {

namespace {

using json = nlohmann::ordered_json;

constexpr int kMaxDepth = 128;        // schema nesting the compiler follows (refs are memoized, not nested)
constexpr int kMaxMergeDepth = 32;    // allOf / $ref merges inside merges
constexpr int kMaxArrayPositions = 10000;
constexpr int kMaxFlexibleWhitespace = 64;  // characters of whitespace between two JSON tokens (whitespace_flexible)

const std::set<std::string> kAnnotations = {
    "title", "description", "default", "examples", "$schema", "$id", "id", "$comment", "deprecated", "readOnly",
    "writeOnly", "$defs", "definitions", "x-guidance", "$anchor", "contentMediaType", "contentEncoding", "example"};
const std::set<std::string> kKnown = {
    "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "required", "additionalProperties",
    "items", "prefixItems", "additionalItems", "minItems", "maxItems", "minLength", "maxLength", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "nullable", "propertyNames"};

const char* kStringChar =
    "(?:[^\"\\\\\\x00-\\x1F]|\\\\[\"\\\\/bfnrt]|\\\\u(?:[0-9a-cA-Ce-fE-F][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2}))";

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) s += (char)cp;
  else if (cp < 0x800) s += (char)(0xC0 | (cp >> 6)), s += (char)(0x80 | (cp & 0x3F));
  else if (cp < 0x10000) s += (char)(0xE0 | (cp >> 12)), s += (char)(0x80 | ((cp >> 6) & 0x3F)), s += (char)(0x80 | (cp & 0x3F));
  else s += (char)(0xF0 | (cp >> 18)), s += (char)(0x80 | ((cp >> 12) & 0x3F)), s += (char)(0x80 | ((cp >> 6) & 0x3F)), s += (char)(0x80 | (cp & 0x3F));
  return s;
}

std::string class_escape(uint32_t cp) {
  if (cp == ']' || cp == '\\' || cp == '^' || cp == '-' || cp == '[' || cp == '&' || cp == '~') return "\\" + utf8(cp);
  return utf8(cp);
}

std::vector<uint32_t> code_points(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = (unsigned char)s[i];
    int n = c < 0x80 ? 0 : c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    uint32_t cp = n == 0 ? c : c & (0x3F >> n);
    for (int k = 1; k <= n && i + k < s.size(); k++) cp = (cp << 6) | ((unsigned char)s[i + k] & 0x3F);
    out.push_back(cp);
    i += n + 1;
  }
  return out;
}

// A JSON string (quotes included, no escapes) that is none of `names`, of at most max_len characters (-1: any).
std::string key_not_in(const std::vector<std::string>& names, int max_len) {
  struct TrieNode {
    std::map<uint32_t, int> kids;
    bool end = false;
  };
  std::vector<TrieNode> t(1);
  for (auto& n : names) {
    // Extra keys are written without escapes: a name with a quote, backslash or control character never collides.
    if (std::any_of(n.begin(), n.end(), [](char c) { return c == '"' || c == '\\' || (unsigned char)c < 0x20; })) continue;
    int at = 0;
    for (uint32_t cp : code_points(n)) {
      auto it = t[at].kids.find(cp);
      if (it == t[at].kids.end()) {
        t[at].kids[cp] = (int)t.size();
        at = (int)t.size();
        t.emplace_back();
      } else {
        at = it->second;
      }
    }
    t[at].end = true;
  }
  const std::string plain = "[^\"\\\\\\x00-\\x1F]";
  std::function<std::string(int, int)> node = [&](int at, int depth) -> std::string {
    OGX_CHECK(depth < 1000, "property name too long");
    std::vector<std::string> alts;
    if (!t[at].end) alts.push_back("\"");
    if (max_len < 0 || depth < max_len) {
      std::string excl = "[^\"\\\\\\x00-\\x1F";
      for (auto& [cp, k] : t[at].kids) excl += class_escape(cp);
      std::string rest = max_len < 0 ? "*" : "{0," + std::to_string(max_len - depth - 1) + "}";
      alts.push_back(excl + "]" + plain + rest + "\"");
      for (auto& [cp, k] : t[at].kids) alts.push_back(regex_escape(utf8(cp)) + node(k, depth + 1));
    }
    if (alts.empty()) return "[^\\x00-\\x{10FFFF}]";  // nothing: every shorter key is a listed name
    std::string s = "(?:";
    for (size_t i = 0; i < alts.size(); i++) s += (i ? "|" : "") + alts[i];
    return s + ")";
  };
  return "\"" + node(0, 0);
}

class Compiler {
 public:
  Compiler(GrammarBuilder& b, const json& root) : b_(b), root_(root) {
    if (root.is_object() && root.contains("x-guidance")) {
      const json& x = root["x-guidance"];
      OGX_CHECK(x.is_object(), "json_schema: \"x-guidance\" must be an object");
      for (auto& [k, v] : x.items()) {
        if (k == "whitespace_flexible") flexible_ = v.get<bool>();
        else if (k == "whitespace_pattern") ws_ = v.get<std::string>(), has_ws_ = true;
        else if (k == "item_separator") item_sep_ = v.get<std::string>();
        else if (k == "key_separator") key_sep_ = v.get<std::string>();
        else if (k == "lenient") lenient_ = v.get<bool>();
        else if (k == "coerce_one_of") (void)v.get<bool>();
        else throw_error("json_schema: unknown \"x-guidance\" option '", k, "'");
      }
    }
    // Flexible whitespace is bounded per gap (kMaxFlexibleWhitespace): a model unsure of the next token cannot
    // fill the rest of its budget with whitespace and leave the JSON unfinished.
    std::string ws = has_ws_ ? "(?:" + ws_ + ")?"
                     : flexible_ ? "[\\x20\\x0A\\x0D\\x09]{0," + std::to_string(kMaxFlexibleWhitespace) + "}"
                                 : "";
    lbrace_ = b_.lexeme("\\{" + ws);
    rbrace_ = b_.lexeme(ws + "\\}");
    lbrack_ = b_.lexeme("\\[" + ws);
    rbrack_ = b_.lexeme(ws + "\\]");
    comma_ = b_.lexeme(ws + "(?:" + item_sep_ + ")" + ws);
    colon_ = b_.lexeme(ws + "(?:" + key_sep_ + ")" + ws);
  }

  int32_t compile(const json& s, const std::string& path, int depth) {
    OGX_CHECK(depth < kMaxDepth, "json_schema: nested deeper than ", kMaxDepth, " levels at ", path);
    if (s.is_boolean()) {
      OGX_CHECK(s.get<bool>(), "json_schema: schema at ", path, " is false (no value is valid)");
      return any();
    }
    OGX_CHECK(s.is_object(), "json_schema: schema at ", path, " must be an object or a boolean");
    for (auto& [k, v] : s.items())
      if (!kKnown.count(k) && !kAnnotations.count(k) && !lenient_)
        throw_error("json_schema: keyword '", k, "' at ", path, " is not supported");
    if (s.contains("$ref")) {
      json rest = s;
      rest.erase("$ref");
      strip_annotations(rest);
      const std::string ref = s["$ref"].get<std::string>();
      if (rest.empty()) return ref_symbol(ref, path);
      return compile(merge(resolve(ref, path), rest, path + "/$ref", 0), path, depth + 1);
    }
    if (s.contains("allOf")) {
      const json& all = s["allOf"];
      OGX_CHECK(all.is_array() && !all.empty(), "json_schema: allOf at ", path, " must be a non-empty array");
      json merged = s;
      merged.erase("allOf");
      for (size_t i = 0; i < all.size(); i++) merged = merge(merged, all[i], path + "/allOf/" + std::to_string(i), 0);
      return compile(merged, path, depth + 1);
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      const json& alts = s[key];
      OGX_CHECK(alts.is_array() && !alts.empty(), "json_schema: ", key, " at ", path, " must be a non-empty array");
      json rest = s;
      rest.erase(key);
      strip_annotations(rest);
      int32_t nt = b_.nonterminal(path + "/" + key);
      for (size_t i = 0; i < alts.size(); i++) {
        std::string p = path + "/" + key + "/" + std::to_string(i);
        b_.rule(nt, {compile(rest.empty() ? alts[i] : merge(rest, alts[i], p, 0), p, depth + 1)});
      }
      return nt;
    }
    if (s.contains("const")) return b_.lexeme(regex_escape(s["const"].dump()));
    if (s.contains("enum")) {
      const json& e = s["enum"];
      OGX_CHECK(e.is_array() && !e.empty(), "json_schema: enum at ", path, " must be a non-empty array");
      std::string rx;
      for (size_t i = 0; i < e.size(); i++) rx += (i ? "|" : "") + regex_escape(e[i].dump());
      return b_.lexeme(rx);
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const json& t = s["type"];
      if (t.is_string()) types.push_back(t.get<std::string>());
      else if (t.is_array())
        for (auto& x : t) types.push_back(x.get<std::string>());
      else throw_error("json_schema: type at ", path, " must be a string or an array of strings");
      OGX_CHECK(!types.empty(), "json_schema: empty type list at ", path);
    } else {
      types = inferred_types(s);
      if (types.empty()) return any();
    }
    if (s.value("nullable", false)) types.push_back("null");
    if (types.size() == 1) return typed(s, types[0], path, depth);
    int32_t nt = b_.nonterminal(path + "/type");
    for (auto& t : types) b_.rule(nt, {typed(s, t, path, depth)});
    return nt;
  }

 private:
  static void strip_annotations(json& s) {
    for (auto& a : kAnnotations) s.erase(a);
  }

  static std::vector<std::string> inferred_types(const json& s) {
    for (const char* k : {"properties", "required", "additionalProperties"})
      if (s.contains(k)) return {"object"};
    for (const char* k : {"items", "prefixItems", "minItems", "maxItems"})
      if (s.contains(k)) return {"array"};
    for (const char* k : {"minLength", "maxLength", "pattern", "format"})
      if (s.contains(k)) return {"string"};
    for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
      if (s.contains(k)) return {"number"};
    return {};
  }

  const json& resolve(const std::string& ref, const std::string& path) {
    OGX_CHECK(!ref.empty() && ref[0] == '#', "json_schema: $ref '", ref, "' at ", path,
              " is not local (only #/... references are supported)");
    const json* at = &root_;
    size_t i = 1;
    while (i < ref.size()) {
      OGX_CHECK(ref[i] == '/', "json_schema: $ref '", ref, "' at ", path, " is not a JSON pointer");
      size_t j = ref.find('/', i + 1);
      std::string tok = ref.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
      std::string key;
      for (size_t k = 0; k < tok.size(); k++) {
        if (tok[k] == '~' && k + 1 < tok.size()) key += tok[k + 1] == '1' ? '/' : '~', k++;
        else key += tok[k];
      }
      if (at->is_array()) {
        size_t idx = 0;
        try {
          idx = std::stoul(key);
        } catch (...) {
          throw_error("json_schema: $ref '", ref, "' at ", path, " does not resolve");
        }
        OGX_CHECK(idx < at->size(), "json_schema: $ref '", ref, "' at ", path, " does not resolve");
        at = &(*at)[idx];
      } else {
        OGX_CHECK(at->is_object() && at->contains(key), "json_schema: $ref '", ref, "' at ", path, " does not resolve");
        at = &(*at)[key];
      }
      i = j == std::string::npos ? ref.size() : j;
    }
    return *at;
  }

  int32_t ref_symbol(const std::string& ref, const std::string& path) {
    auto it = refs_.find(ref);
    if (it != refs_.end()) return it->second;
    int32_t nt = b_.nonterminal(ref);
    refs_[ref] = nt;
    const json& target = resolve(ref, path);
    b_.rule(nt, {compile(target, ref, 0)});
    return nt;
  }

  // allOf: one schema that validates what both do (objects' properties and required merged, bounds tightened).
  json merge(const json& a_in, const json& b_in, const std::string& path, int depth) {
    OGX_CHECK(depth < kMaxMergeDepth, "json_schema: allOf / $ref merges nested too deeply at ", path);
    auto deref = [&](const json& s) -> json {
      json cur = s;
      for (int i = 0; cur.is_object() && cur.contains("$ref"); i++) {
        OGX_CHECK(i < kMaxMergeDepth, "json_schema: $ref chain too long at ", path);
        json rest = cur;
        rest.erase("$ref");
        json target = resolve(cur["$ref"].get<std::string>(), path);
        cur = rest.empty() ? target : merge(target, rest, path, depth + 1);
      }
      return cur;
    };
    json a = deref(a_in), b = deref(b_in);
    if (a.is_boolean()) return a.get<bool>() ? b : a;
    if (b.is_boolean()) return b.get<bool>() ? a : b;
    OGX_CHECK(a.is_object() && b.is_object(), "json_schema: allOf at ", path, " needs object schemas");
    if (b.contains("allOf")) {
      json inner = b;
      inner.erase("allOf");
      for (auto& x : b["allOf"]) inner = merge(inner, x, path, depth + 1);
      b = inner;
    }
    json r = a;
    for (auto& [k, v] : b.items()) {
      if (!r.contains(k) || kAnnotations.count(k)) {
        if (!r.contains(k)) r[k] = v;
        continue;
      }
      json& cur = r[k];
      if (k == "properties") {
        for (auto& [pk, pv] : v.items())
          cur[pk] = cur.contains(pk) ? json{{"allOf", json::array({cur[pk], pv})}} : pv;
      } else if (k == "required") {
        for (auto& n : v)
          if (std::find(cur.begin(), cur.end(), n) == cur.end()) cur.push_back(n);
      } else if (k == "type") {
        auto list = [](const json& t) {
          std::vector<std::string> l;
          if (t.is_string()) l.push_back(t.get<std::string>());
          else for (auto& x : t) l.push_back(x.get<std::string>());
          return l;
        };
        std::vector<std::string> out, lb = list(v);
        for (auto& t : list(cur)) {
          if (std::find(lb.begin(), lb.end(), t) != lb.end()) out.push_back(t);
          else if (t == "integer" && std::find(lb.begin(), lb.end(), "number") != lb.end()) out.push_back(t);
          else if (t == "number" && std::find(lb.begin(), lb.end(), "integer") != lb.end()) out.push_back("integer");
        }
        OGX_CHECK(!out.empty(), "json_schema: allOf at ", path, " has no common type");
        cur = out.size() == 1 ? json(out[0]) : json(out);
      } else if (k == "minimum" || k == "minLength" || k == "minItems" || k == "exclusiveMinimum") {
        if (v.is_number() && cur.is_number()) cur = std::max(cur.get<double>(), v.get<double>());
      } else if (k == "maximum" || k == "maxLength" || k == "maxItems" || k == "exclusiveMaximum") {
        if (v.is_number() && cur.is_number()) cur = std::min(cur.get<double>(), v.get<double>());
      } else if (k == "additionalProperties" || k == "items") {
        if (cur.is_boolean() && !cur.get<bool>()) continue;
        if (v.is_boolean() && !v.get<bool>()) cur = false;
        else cur = json{{"allOf", json::array({cur, v})}};
      } else if (k == "enum") {
        json out = json::array();
        for (auto& x : cur)
          if (std::find(v.begin(), v.end(), x) != v.end()) out.push_back(x);
        OGX_CHECK(!out.empty(), "json_schema: allOf at ", path, " has no common enum value");
        cur = out;
      } else if (cur != v) {
        throw_error("json_schema: allOf at ", path, " cannot combine two different '", k, "'");
      }
    }
    return r;
  }

  int32_t typed(const json& s, const std::string& type, const std::string& path, int depth) {
    if (type == "null") return b_.lexeme("null");
    if (type == "boolean") return b_.lexeme("true|false");
    if (type == "integer" || type == "number") return number(s, type == "integer", path);
    if (type == "string") return string(s, path);
    if (type == "object") return object(s, path, depth);
    if (type == "array") return array(s, path, depth);
    throw_error("json_schema: unknown type '", type, "' at ", path);
  }

  int32_t number(const json& s, bool integer, const std::string& path) {
    std::optional<Bound> lo, hi;
    auto num = [&](const char* k) {
      OGX_CHECK(s[k].is_number(), "json_schema: ", k, " at ", path, " must be a number");
      return s[k].get<double>();
    };
    if (s.contains("minimum")) lo = Bound{num("minimum"), false};
    if (s.contains("maximum")) hi = Bound{num("maximum"), false};
    if (s.contains("exclusiveMinimum")) {
      if (s["exclusiveMinimum"].is_boolean()) {  // draft 4
        if (lo && s["exclusiveMinimum"].get<bool>()) lo->exclusive = true;
      } else if (double v = num("exclusiveMinimum"); !lo || v >= lo->value) {
        lo = Bound{v, true};
      }
    }
    if (s.contains("exclusiveMaximum")) {
      if (s["exclusiveMaximum"].is_boolean()) {
        if (hi && s["exclusiveMaximum"].get<bool>()) hi->exclusive = true;
      } else if (double v = num("exclusiveMaximum"); !hi || v <= hi->value) {
        hi = Bound{v, true};
      }
    }
    try {
      return b_.lexeme(integer ? integer_range_regex(lo, hi) : number_range_regex(lo, hi));
    } catch (const Error& e) {
      throw_error("json_schema: ", e.what(), " at ", path);
    }
  }

  int32_t string(const json& s, const std::string& path) {
    auto count = [&](const char* k, int dflt) {
      if (!s.contains(k)) return dflt;
      OGX_CHECK(s[k].is_number_unsigned() && s[k].get<uint64_t>() <= 100000, "json_schema: ", k, " at ", path,
                " must be an integer in [0, 100000]");
      return (int)s[k].get<uint64_t>();
    };
    const int mn = count("minLength", 0), mx = count("maxLength", -1);
    OGX_CHECK(mx < 0 || mn <= mx, "json_schema: minLength > maxLength at ", path);
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    if (s.contains("format")) {
      const std::string f = s["format"].get<std::string>();
      std::string rx = format_regex(f);
      if (rx.empty()) {
        OGX_CHECK(lenient_, "json_schema: format '", f, "' at ", path, " is not supported");
      } else {
        OGX_CHECK(!lengths || lenient_, "json_schema: format with minLength/maxLength at ", path, " is not supported");
        RegexOptions o;
        o.json_string = true;
        return b_.lexeme(rx, o);
      }
    }
    if (s.contains("pattern")) {
      OGX_CHECK(!lengths || lenient_, "json_schema: pattern with minLength/maxLength at ", path, " is not supported");
      std::string p = s["pattern"].get<std::string>();
      bool start = !p.empty() && p[0] == '^';
      if (start) p.erase(0, 1);
      bool end = !p.empty() && p.back() == '$' && (p.size() < 2 || p[p.size() - 2] != '\\');
      if (end) p.pop_back();
      RegexOptions o;
      o.json_string = true;
      try {
        return b_.lexeme((start ? "" : "(?s:.)*") + ("(?:" + p + ")") + (end ? "" : "(?s:.)*"), o);
      } catch (const Error& e) {
        throw_error("json_schema: pattern at ", path, ": ", e.what());
      }
    }
    std::string rep = mx < 0 ? "{" + std::to_string(mn) + ",}" : "{" + std::to_string(mn) + "," + std::to_string(mx) + "}";
    return b_.lexeme("\"" + std::string(kStringChar) + rep + "\"");
  }

  int32_t key_lexeme(const std::string& name) { return b_.lexeme(regex_escape(json(name).dump())); }

  int32_t object(const json& s, const std::string& path, int depth) {
    std::vector<std::pair<std::string, json>> props;
    if (s.contains("properties")) {
      OGX_CHECK(s["properties"].is_object(), "json_schema: properties at ", path, " must be an object");
      for (auto& [k, v] : s["properties"].items()) props.push_back({k, v});
    }
    std::set<std::string> required;
    if (s.contains("required"))
      for (auto& r : s["required"]) required.insert(r.get<std::string>());
    json additional = s.contains("additionalProperties") ? s["additionalProperties"] : json(true);
    for (auto& r : s.contains("required") ? s["required"] : json::array()) {
      std::string n = r.get<std::string>();
      bool listed = false;
      for (auto& p : props) listed = listed || p.first == n;
      if (listed) continue;
      OGX_CHECK(!(additional.is_boolean() && !additional.get<bool>()), "json_schema: required property '", n,
                "' at ", path, " is not in properties and additionalProperties is false");
      props.push_back({n, additional});
    }
    const size_t n = props.size();
    std::vector<int32_t> kv(n);
    std::vector<std::string> names;
    for (size_t i = 0; i < n; i++) {
      int32_t value = compile(props[i].second, path + "/properties/" + props[i].first, depth + 1);
      kv[i] = b_.seq(path + "." + props[i].first, {key_lexeme(props[i].first), colon_, value});
      names.push_back(props[i].first);
    }
    const bool extra = !(additional.is_boolean() && !additional.get<bool>());
    int key_max = -1;  // propertyNames: {"maxLength": N} bounds the extra keys
    if (s.contains("propertyNames")) {
      const json& pn = s["propertyNames"];
      for (auto& [k, v] : pn.items()) {
        if (k == "maxLength" && v.is_number_unsigned() && v.get<uint64_t>() <= 100000) key_max = (int)v.get<uint64_t>();
        else if (k != "type" && !kAnnotations.count(k) && !lenient_)
          throw_error("json_schema: propertyNames at ", path, " supports maxLength only (got '", k, "')");
      }
    }
    int32_t tail_first = b_.nonterminal(path + "{tail0}"), tail_rest = b_.nonterminal(path + "{tail}");
    b_.rule(tail_first, {});
    b_.rule(tail_rest, {});
    if (extra) {
      int32_t value = compile(additional, path + "/additionalProperties", depth + 1);
      int32_t key = b_.lexeme(key_not_in(names, key_max));
      int32_t kv_extra = b_.seq(path + "{extra}", {key, colon_, value});
      b_.rule(tail_rest, {comma_, kv_extra, tail_rest});
      b_.rule(tail_first, {kv_extra, tail_rest});
    }
    int32_t first = tail_first, rest = tail_rest;  // F[i]: nothing emitted yet; R[i]: a comma comes first
    for (size_t i = n; i-- > 0;) {
      int32_t f = b_.nonterminal(path + "{F}"), r = b_.nonterminal(path + "{R}");
      b_.rule(f, {kv[i], rest});
      b_.rule(r, {comma_, kv[i], rest});
      if (!required.count(props[i].first)) {
        b_.rule(f, {first});
        b_.rule(r, {rest});
      }
      first = f;
      rest = r;
    }
    return b_.seq(path + "{}", {lbrace_, first, rbrace_});
  }

  int32_t array(const json& s, const std::string& path, int depth) {
    std::vector<json> prefix;
    json items = true;
    if (s.contains("prefixItems")) {
      for (auto& x : s["prefixItems"]) prefix.push_back(x);
      if (s.contains("items")) items = s["items"];
    } else if (s.contains("items") && s["items"].is_array()) {  // draft 7
      for (auto& x : s["items"]) prefix.push_back(x);
      if (s.contains("additionalItems")) items = s["additionalItems"];
    } else if (s.contains("items")) {
      items = s["items"];
    }
    auto count = [&](const char* k, int64_t dflt) -> int64_t {
      if (!s.contains(k)) return dflt;
      OGX_CHECK(s[k].is_number_unsigned(), "json_schema: ", k, " at ", path, " must be a non-negative integer");
      return (int64_t)std::min<uint64_t>(s[k].get<uint64_t>(), 1ull << 40);
    };
    const int64_t mn = count("minItems", 0), mx = count("maxItems", -1);
    OGX_CHECK(mx < 0 || mn <= mx, "json_schema: minItems > maxItems at ", path);
    const bool more = !(items.is_boolean() && !items.get<bool>());
    const int64_t k = (int64_t)prefix.size();
    OGX_CHECK(more || mn <= k, "json_schema: minItems ", mn, " at ", path, " exceeds the ", k, " items allowed");
    const int64_t last = mx >= 0 ? (more ? mx : std::min(mx, k)) : std::max(k, mn);  // positions spelled out
    OGX_CHECK(last <= kMaxArrayPositions, "json_schema: array at ", path, " spells out ", last,
              " positions (minItems / maxItems / prefixItems above ", kMaxArrayPositions, ")");
    int32_t item_sym = more ? compile(items, path + "/items", depth + 1) : -1;
    std::vector<int32_t> prefix_sym;
    for (int64_t i = 0; i < k; i++) prefix_sym.push_back(compile(prefix[i], path + "/prefixItems/" + std::to_string(i), depth + 1));
    // N[i]: the items from position i on (a comma before each when i > 0).
    int32_t next;
    if (mx < 0 && more) {  // unbounded tail from position `last`
      int32_t rest = b_.nonterminal(path + "[rest]");
      b_.rule(rest, {});
      b_.rule(rest, {comma_, item_sym, rest});
      if (last == 0) next = b_.alt(path + "[tail]", {{}, {item_sym, rest}});
      else next = rest;
    } else {
      next = b_.seq(path + "[end]", {});
    }
    for (int64_t i = last; i-- > 0;) {
      int32_t elem = i < k ? prefix_sym[i] : item_sym;
      std::vector<int32_t> body;
      if (i > 0) body.push_back(comma_);
      body.push_back(elem);
      body.push_back(next);
      int32_t nt = b_.nonterminal(path + "[" + std::to_string(i) + "]");
      b_.rule(nt, body);
      if (i >= mn) b_.rule(nt, {});
      next = nt;
    }
    return b_.seq(path + "[]", {lbrack_, next, rbrack_});
  }

  int32_t any() {
    if (any_ >= 0) return any_;
    any_ = b_.nonterminal("value");
    int32_t str = b_.lexeme("\"" + std::string(kStringChar) + "*\"");
    int32_t pair = b_.seq("pair", {str, colon_, any_});
    int32_t pairs = b_.nonterminal("pairs");
    b_.rule(pairs, {});
    b_.rule(pairs, {comma_, pair, pairs});
    int32_t obj = b_.alt("object", {{lbrace_, rbrace_}, {lbrace_, pair, pairs, rbrace_}});
    int32_t vals = b_.nonterminal("values");
    b_.rule(vals, {});
    b_.rule(vals, {comma_, any_, vals});
    int32_t arr = b_.alt("array", {{lbrack_, rbrack_}, {lbrack_, any_, vals, rbrack_}});
    for (int32_t alt : {obj, arr, str, b_.lexeme(number_range_regex({}, {})), b_.lexeme("true|false|null")})
      b_.rule(any_, {alt});
    return any_;
  }

  GrammarBuilder& b_;
  const json& root_;
  bool flexible_ = true, has_ws_ = false, lenient_ = false;
  std::string ws_, item_sep_ = ",", key_sep_ = ":";
  int32_t lbrace_, rbrace_, lbrack_, rbrack_, comma_, colon_;
  int32_t any_ = -1;
  std::map<std::string, int32_t> refs_;
};

}  // namespace

int32_t compile_json_schema(GrammarBuilder& b, const std::string& schema_text) {
  check_json_depth(schema_text, "json_schema");
  json root;
  try {
    root = json::parse(schema_text);
  } catch (const json::exception& e) {
    throw_error("json_schema: invalid JSON: ", json_error_text(e));
  }
  try {
    Compiler c(b, root);
    return c.compile(root, "#", 0);
  } catch (const json::exception& e) {
    throw_error("json_schema: ", json_error_text(e));
  }
}

}  // namespace ogx::genai::guidance
