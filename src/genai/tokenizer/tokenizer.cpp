// ogx::tok::Tokenizer: folder loading, tokenizer_config.json handling, and the public encode/decode API.
#include "genai/tokenizer/tokenizer.h"

#include <climits>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_limits.h"
#include "genai/tokenizer/backend.h"
#include "genai/tokenizer/unicode.h"

namespace ogx::tok {

using json = nlohmann::json;

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

namespace {
json parse_json(const std::string& text, const std::string& what) {
  check_json_depth(text, what);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw_error(what, ": invalid JSON: ", json_error_text(e));
  }
}

// "<s>" or {"content": "<s>", ...} or null.
std::string token_string(const json& cfg, const char* key) {
  auto it = cfg.find(key);
  if (it == cfg.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) return (*it)["content"].get<std::string>();
  throw_error("tokenizer_config.json: ", key, ": expected a string or {\"content\": ...}");
}
}  // namespace

void Tokenizer::apply_config(const std::string& config_json, const std::string& gen_config_json) {
  json cfg = config_json.empty() ? json::object() : parse_json(config_json, "tokenizer_config.json");
  if (!cfg.is_object()) throw_error("tokenizer_config.json: top level: expected an object");
  bos_ = token_string(cfg, "bos_token");
  eos_ = token_string(cfg, "eos_token");
  pad_ = token_string(cfg, "pad_token");
  unk_ = token_string(cfg, "unk_token");
  auto flag = [&](const char* key, bool def) {
    auto it = cfg.find(key);
    if (it == cfg.end() || it->is_null()) return def;
    if (!it->is_boolean()) throw_error("tokenizer_config.json: ", key, ": expected a boolean");
    return it->get<bool>();
  };
  add_bos_ = flag("add_bos_token", false);
  add_eos_ = flag("add_eos_token", false);
  clean_up_spaces_ = flag("clean_up_tokenization_spaces", false);
  bos_id_ = bos_.empty() ? -1 : token_to_id(bos_);
  pad_id_ = pad_.empty() ? -1 : token_to_id(pad_);
  if (!eos_.empty() && token_to_id(eos_) >= 0) eos_ids_.push_back(token_to_id(eos_));
  if (!gen_config_json.empty()) {
    json g = parse_json(gen_config_json, "generation_config.json");
    auto add_eos = [&](const json& v) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX) return;  // not a token
      int32_t id = v.get<int32_t>();
      if (std::find(eos_ids_.begin(), eos_ids_.end(), id) == eos_ids_.end()) eos_ids_.push_back(id);
    };
    if (g.is_object() && g.contains("eos_token_id")) {
      if (g["eos_token_id"].is_array()) for (const auto& v : g["eos_token_id"]) add_eos(v);
      else add_eos(g["eos_token_id"]);
    }
    if (bos_id_ < 0 && g.is_object() && g.contains("bos_token_id") && g["bos_token_id"].is_number_integer() &&
        g["bos_token_id"].get<int64_t>() >= 0 && g["bos_token_id"].get<int64_t>() <= INT32_MAX)
      bos_id_ = g["bos_token_id"].get<int32_t>();
  }
  if (cfg.contains("chat_template")) {
    const json& ct = cfg["chat_template"];
    if (ct.is_string()) {
      templates_["default"] = ct.get<std::string>();
    } else if (ct.is_array()) {
      for (size_t i = 0; i < ct.size(); ++i) {
        if (!ct[i].is_object() || !ct[i].contains("name") || !ct[i].contains("template") || !ct[i]["name"].is_string() ||
            !ct[i]["template"].is_string())
          throw_error("tokenizer_config.json: chat_template[", i, "]: expected {\"name\": ..., \"template\": ...}");
        templates_[ct[i]["name"].get<std::string>()] = ct[i]["template"].get<std::string>();
      }
    } else if (!ct.is_null()) {
      throw_error("tokenizer_config.json: chat_template: expected a string or a list of {name, template}");
    }
  }
}

std::shared_ptr<Tokenizer> Tokenizer::from_json(const std::string& tokenizer_json, const std::string& config_json) {
  std::shared_ptr<Tokenizer> t(new Tokenizer());
  t->backend_ = make_hf_backend(parse_json(tokenizer_json, "tokenizer.json"));
  t->apply_config(config_json, "");
  return t;
}

std::shared_ptr<Tokenizer> Tokenizer::load(const std::string& dir) {
  std::shared_ptr<Tokenizer> t(new Tokenizer());
  auto opt = [&](const std::string& name) { return file_exists(dir + "/" + name) ? read_file(dir + "/" + name) : std::string(); };
  std::string config = opt("tokenizer_config.json");
  if (file_exists(dir + "/tokenizer.json")) {
    t->backend_ = make_hf_backend(parse_json(read_file(dir + "/tokenizer.json"), dir + "/tokenizer.json"));
  } else if (file_exists(dir + "/tokenizer.json.xz")) {
    t->backend_ = make_hf_backend(parse_json(read_file(dir + "/tokenizer.json.xz"), dir + "/tokenizer.json.xz"));
  } else if (file_exists(dir + "/tokenizer.model")) {
    t->backend_ = make_sentencepiece_backend(dir + "/tokenizer.model");
    // Without tokenizer_config.json: Llama-style defaults (add BOS; <s>, </s>, <unk> when the model has them).
    if (config.empty()) {
      json c = {{"add_bos_token", true}};
      for (auto [key, piece] : {std::pair{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"unk_token", "<unk>"}})
        if (t->backend_->token_to_id(piece) >= 0) c[key] = piece;
      config = c.dump();
    }
  } else {
    throw_error(dir, ": no tokenizer.json, tokenizer.json.xz or tokenizer.model");
  }
  t->apply_config(config, opt("generation_config.json"));
  if (t->templates_.find("default") == t->templates_.end() && file_exists(dir + "/chat_template.jinja"))
    t->templates_["default"] = read_file(dir + "/chat_template.jinja");
  return t;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  if (is_valid_utf8(text)) ids = backend_->encode(text);
  else ids = backend_->encode(sanitize_utf8(text));
  if (add_special_tokens && !backend_->post_process(ids)) {
    // No post-processor adds tokens: follow tokenizer_config.json's add_bos_token / add_eos_token.
    if (add_bos_ && bos_id_ >= 0) ids.insert(ids.begin(), bos_id_);
    if (add_eos_ && !eos_ids_.empty()) ids.push_back(eos_ids_.front());
  }
  return ids;
}

std::vector<std::vector<int32_t>> Tokenizer::encode_batch(const std::vector<std::string>& texts, bool add_special_tokens) const {
  std::vector<std::vector<int32_t>> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(encode(t, add_special_tokens));
  return out;
}

std::string Tokenizer::decode_bytes(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return backend_->decode(ids, skip_special_tokens);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  return sanitize_utf8(backend_->decode(ids, skip_special_tokens));
}

std::vector<std::string> Tokenizer::decode_batch(const std::vector<std::vector<int32_t>>& ids, bool skip_special_tokens) const {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const auto& v : ids) out.push_back(decode(v, skip_special_tokens));
  return out;
}

int32_t Tokenizer::token_to_id(std::string_view token) const { return backend_->token_to_id(token); }

std::string Tokenizer::id_to_token(int32_t id) const {
  auto t = backend_->id_to_token(id);
  if (!t) throw_error("id_to_token: token id ", id, " is out of range (vocabulary size ", vocab_size(), ")");
  return *t;
}

bool Tokenizer::is_special(int32_t id) const { return backend_->is_special(id); }
PieceRules Tokenizer::piece_rules() const { return backend_->piece_rules(); }
size_t Tokenizer::vocab_size() const { return backend_->vocab_size(); }

const std::string& Tokenizer::chat_template(const std::string& name) const {
  static const std::string empty;
  auto it = templates_.find(name.empty() ? "default" : name);
  return it == templates_.end() ? empty : it->second;
}

}  // namespace ogx::tok
