// Post-processors: TemplateProcessing (single-sequence template), ByteLevel (no ids added), RobertaProcessing,
// BertProcessing, Sequence.
#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"

namespace ogx::tok {

namespace {

// The template as a list of items: an id list to insert, or the sequence itself (empty list + is_seq).
struct TemplatePost : PostProcessor {
  std::vector<std::vector<int32_t>> parts;  // empty vector = the sequence
  bool adds = false;
  void process(std::vector<int32_t>& ids) const override {
    std::vector<int32_t> out;
    out.reserve(ids.size() + 4);
    for (const auto& p : parts) {
      if (p.empty()) out.insert(out.end(), ids.begin(), ids.end());
      else out.insert(out.end(), p.begin(), p.end());
    }
    ids.swap(out);
  }
  bool adds_tokens() const override { return adds; }
};

struct NoopPost : PostProcessor {
  void process(std::vector<int32_t>&) const override {}
  bool adds_tokens() const override { return false; }
};

struct SequencePost : PostProcessor {
  std::vector<std::unique_ptr<PostProcessor>> items;
  void process(std::vector<int32_t>& ids) const override {
    for (const auto& p : items) p->process(ids);
  }
  bool adds_tokens() const override {
    for (const auto& p : items) if (p->adds_tokens()) return true;
    return false;
  }
};

int32_t pair_id(const json& j, const char* key, const std::string& path) {
  const auto& v = jreq(j, key, path);
  if (!v.is_array() || v.size() != 2) throw_error("tokenizer.json: ", jpath(path, key), ": expected [token, id]");
  return jtoken_id(v[1], jpath(path, key) + "[1]");
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const json& j, const std::string& path, const VocabLookup& vocab) {
  if (j.is_null()) return nullptr;
  std::string type = jstr(j, "type", path);
  if (type == "Sequence") {
    auto seq = std::make_unique<SequencePost>();
    const auto& arr = jarr(j, "processors", path);
    for (size_t i = 0; i < arr.size(); ++i) {
      auto p = make_post_processor(arr[i], jpath(jpath(path, "processors"), i), vocab);
      if (p) seq->items.push_back(std::move(p));
    }
    return seq;
  }
  if (type == "ByteLevel") return std::make_unique<NoopPost>();
  if (type == "TemplateProcessing") {
    auto t = std::make_unique<TemplatePost>();
    const auto& single = jarr(j, "single", path);
    const json specials = j.contains("special_tokens") ? j["special_tokens"] : json::object();
    std::string sp = jpath(path, "single");
    for (size_t i = 0; i < single.size(); ++i) {
      const auto& item = single[i];
      std::string ip = jpath(sp, i);
      if (item.contains("Sequence")) { t->parts.emplace_back(); continue; }
      if (!item.contains("SpecialToken")) throw_error("tokenizer.json: ", ip, ": expected Sequence or SpecialToken");
      std::string name = jstr(item["SpecialToken"], "id", jpath(ip, "SpecialToken"));
      std::vector<int32_t> ids;
      if (specials.is_object() && specials.contains(name)) {
        const auto& st = specials[name];
        const auto& arr = jarr(st, "ids", jpath(jpath(path, "special_tokens"), name));
        for (size_t k = 0; k < arr.size(); k++) ids.push_back(jtoken_id(arr[k], jpath(jpath(ip, "ids"), k)));
      } else {
        int32_t id = vocab.lookup(name);
        if (id < 0) throw_error("tokenizer.json: ", ip, ": special token '", name, "' is not in special_tokens or the vocabulary");
        ids.push_back(id);
      }
      if (ids.empty()) continue;
      t->adds = true;
      t->parts.push_back(std::move(ids));
    }
    return t;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    auto t = std::make_unique<TemplatePost>();
    t->parts.push_back({pair_id(j, "cls", path)});
    t->parts.emplace_back();
    t->parts.push_back({pair_id(j, "sep", path)});
    t->adds = true;
    return t;
  }
  throw_error("tokenizer.json: ", jpath(path, "type"), ": unknown post-processor type '", type, "'");
}

}  // namespace ogx::tok
