// Differential test: every template in tests/data/templates (and the golden tokenizers' templates) rendered
// with a fixed set of conversations by ogx and by Python jinja2 configured like transformers
// (render_reference.py). Expectations are stored in data/expected.json and recomputed live when
// /usr/bin/python3 has jinja2.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/error.h"
#include "genai/chat_template/chat_template.h"

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {
const fs::path kData = OGX_CHAT_TEMPLATE_TEST_DATA;
const int64_t kNow = 1721988000;  // 2024-07-26 10:00:00, as in data/scenarios.json

// Templates whose renders cannot match Python (reason in the report).
const std::set<std::string> kKnownMismatch = {};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

ordered_json load(const fs::path& p) { return ordered_json::parse(read_file(p)); }

std::vector<fs::path> template_files() {
  std::vector<fs::path> out;
  for (auto& e : fs::directory_iterator(kData / "templates"))
    if (e.path().extension() == ".jinja") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Golden tokenizers' templates written as .jinja files so the Python side renders them too.
std::vector<fs::path> golden_template_files(const fs::path& tmp) {
  std::vector<fs::path> out;
  for (const char* name : {"llama2", "llama3", "qwen3"}) {
    fs::path cfg = fs::path(OGX_SHARED_DIR) / "golden" / "tokenizers" / name / "tokenizer_config.json";
    if (!fs::exists(cfg)) continue;
    ordered_json c = load(cfg);
    if (!c.contains("chat_template") || !c["chat_template"].is_string()) continue;
    fs::path p = tmp / (std::string("golden-") + name + ".jinja");
    std::ofstream(p, std::ios::binary) << c["chat_template"].get<std::string>();
    out.push_back(p);
  }
  return out;
}

bool python_available() {
  return std::system("/usr/bin/python3 -c 'import jinja2' >/dev/null 2>&1") == 0;
}

ordered_json run_python(const fs::path& out, const std::vector<fs::path>& files) {
  std::string cmd = "/usr/bin/python3 '" + std::string(OGX_CHAT_TEMPLATE_TEST_DIR) + "/render_reference.py' '" +
                    (kData / "scenarios.json").string() + "' '" + out.string() + "'";
  for (auto& f : files) cmd += " '" + f.string() + "'";
  if (std::system(cmd.c_str()) != 0) return nullptr;
  return load(out);
}

struct Outcome {
  bool ok = true;
  std::string text;
};

Outcome render_ours(const std::string& src, const ordered_json& spec, const ordered_json& sc) {
  ordered_json tools = sc.value("use_tools", false) ? spec["tools"] : ordered_json(nullptr);
  ordered_json extra = spec["context"];
  extra["documents"] = nullptr;
  ogx::jinja::RenderOptions opts;
  opts.now = kNow;
  try {
    return {true, ogx::jinja::apply_chat_template(src, sc["messages"], sc["add_generation_prompt"].get<bool>(), tools,
                                                  extra, opts)};
  } catch (const ogx::Error& e) {
    return {false, e.what()};
  }
}

// Compares one template's renders with the expected ones; returns "" when all match, else a description.
std::string compare_template(const fs::path& file, const ordered_json& spec, const ordered_json& expected) {
  std::string src = read_file(file);
  std::string problems;
  for (auto& sc : spec["scenarios"]) {
    std::string name = sc["name"].get<std::string>();
    const ordered_json& exp = expected.at(name);
    Outcome got = render_ours(src, spec, sc);
    if (exp.contains("error")) {
      if (got.ok) problems += "  " + name + ": Python raised (" + exp["error"].get<std::string>() + "), ogx rendered\n";
    } else if (!got.ok) {
      problems += "  " + name + ": ogx raised: " + got.text + "\n";
    } else if (got.text != exp["text"].get<std::string>()) {
      std::string e = exp["text"].get<std::string>();
      size_t k = 0;
      while (k < e.size() && k < got.text.size() && e[k] == got.text[k]) ++k;
      problems += "  " + name + ": differs at byte " + std::to_string(k) + ": python «" + e.substr(k, 60) +
                  "» ogx «" + got.text.substr(k, 60) + "»\n";
    }
  }
  return problems;
}

void run_differential(const ordered_json& expected, const std::vector<fs::path>& files, const char* label) {
  ordered_json spec = load(kData / "scenarios.json");
  int matched = 0, total = 0;
  std::string report;
  for (auto& f : files) {
    std::string name = f.filename().string();
    if (!expected.contains(name)) continue;
    ++total;
    std::string problems = compare_template(f, spec, expected[name]);
    if (problems.empty()) ++matched;
    else if (kKnownMismatch.count(name)) report += "(known) " + name + "\n";
    else ADD_FAILURE() << label << ": " << name << " mismatches:\n" << problems;
  }
  std::cout << label << ": " << matched << "/" << total << " templates match Python jinja2\n" << report;
}
}  // namespace

TEST(ChatTemplateDifferential, StoredExpectations) {
  ordered_json expected = load(kData / "expected.json");
  run_differential(expected, template_files(), "stored");
}

TEST(ChatTemplateDifferential, LivePython) {
  if (!python_available()) GTEST_SKIP() << "/usr/bin/python3 with jinja2 not available";
  fs::path tmp = fs::temp_directory_path() / ("ogx_chat_template_" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  std::vector<fs::path> files = template_files();
  for (auto& g : golden_template_files(tmp)) files.push_back(g);
  ordered_json expected = run_python(tmp / "expected.json", files);
  ASSERT_FALSE(expected.is_null()) << "render_reference.py failed";
  run_differential(expected, files, "live");
  fs::remove_all(tmp);
}
