// Golden renders: transformers.apply_chat_template outputs stored in ../shared/golden/tokenizers/*/reference.json.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "genai/chat_template/chat_template.h"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {
ordered_json load(const fs::path& p) {
  std::ifstream f(p);
  return ordered_json::parse(f);
}

ordered_json token_text(const ordered_json& t) {
  if (t.is_object() && t.contains("content")) return t["content"];
  return t;
}

std::string template_of(const ordered_json& cfg) {
  const auto& t = cfg["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  for (auto& e : t)
    if (e.value("name", "") == "default") return e["template"].get<std::string>();
  return t.at(0)["template"].get<std::string>();
}

void check_golden(const std::string& name) {
  fs::path dir = fs::path(OGX_SHARED_DIR) / "golden" / "tokenizers" / name;
  if (!fs::exists(dir)) GTEST_SKIP() << "shared goldens absent: " << dir;
  ordered_json cfg = load(dir / "tokenizer_config.json");
  ordered_json ref = load(dir / "reference.json");
  if (!cfg.contains("chat_template")) {
    EXPECT_TRUE(ref["chat"].empty()) << name << " has chat goldens but no chat_template";
    GTEST_SKIP() << name << " has no chat template";
  }
  std::string tmpl = template_of(cfg);
  ordered_json extra = ordered_json::object();
  for (const char* k : {"bos_token", "eos_token", "unk_token", "pad_token"})
    if (cfg.contains(k)) extra[k] = token_text(cfg[k]);
  int n = 0;
  for (auto& c : ref["chat"]) {
    std::string out = ogx::jinja::apply_chat_template(tmpl, c["messages"], c["add_generation_prompt"].get<bool>(),
                                                      ordered_json(nullptr), extra);
    EXPECT_EQ(out, c["text"].get<std::string>()) << name << " case " << n;
    ++n;
  }
}
}  // namespace

TEST(ChatTemplateGolden, Llama3) { check_golden("llama3"); }
TEST(ChatTemplateGolden, Qwen3) { check_golden("qwen3"); }
TEST(ChatTemplateGolden, Llama2) { check_golden("llama2"); }
