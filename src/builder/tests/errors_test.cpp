// Bad inputs give ogx::Error messages naming the tensor / field at fault.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/safetensors.h"
#include "common/error.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder::test {
namespace {

std::string llama_config_text() { return read_file(golden_dir() + "/llama/hf/config.json"); }

void write_text(const std::string& path, const std::string& s) { std::ofstream(path, std::ios::binary) << s; }

// A safetensors file with the given tensors (zeros, or bytes of `fill`, of the given dtype).
void write_safetensors(const std::string& path, const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>& ts,
                       char fill = '\0') {
  json h = json::object();
  size_t off = 0;
  for (const auto& [name, dtype, shape] : ts) {
    size_t n = dtype == "F32" || dtype == "I32" ? 4 : dtype == "I8" ? 1 : 2;
    for (int64_t d : shape) n *= d;
    h[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {off, off + n}}};
    off += n;
  }
  std::string hs = h.dump();
  uint64_t len = hs.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << hs << std::string(off, fill);
}

std::string build_error(const std::string& dir) {
  BuildOptions o;
  o.input_dir = dir;
  o.num_threads = 1;
  try {
    build_model(o);
  } catch (const ogx::Error& e) {
    return e.what();
  }
  return "<no error>";
}

class BuilderErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_goldens()) GTEST_SKIP() << "golden models not found under " << golden_dir();
    dir_ = temp_dir("errors");
    write_text(dir_ + "/config.json", llama_config_text());
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(BuilderErrors, MissingTensorIsNamed) {
  write_safetensors(dir_ + "/model.safetensors", {{"model.embed_tokens.weight", "F32", {2048, 64}}});
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("missing tensor model.layers.0.input_layernorm.weight"));
}

TEST_F(BuilderErrors, WrongShapeIsNamed) {
  write_safetensors(dir_ + "/model.safetensors", {{"model.embed_tokens.weight", "F32", {2048, 32}}});
  EXPECT_THAT(build_error(dir_),
              ::testing::HasSubstr("tensor model.embed_tokens.weight has shape [2048, 32], expected [2048, 64]"));
}

TEST_F(BuilderErrors, TruncatedFile) {
  std::string full = read_file(golden_dir() + "/llama/hf/model.safetensors");
  write_text(dir_ + "/model.safetensors", full.substr(0, full.size() / 2));
  std::string msg = build_error(dir_);
  EXPECT_THAT(msg, ::testing::HasSubstr("truncated"));
  EXPECT_THAT(msg, ::testing::HasSubstr("tensor model."));
  write_text(dir_ + "/model.safetensors", full.substr(0, 5));
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("truncated safetensors file"));
}

TEST_F(BuilderErrors, UnknownDtypeIsNamed) {
  write_safetensors(dir_ + "/model.safetensors", {{"model.embed_tokens.weight", "I8", {2048, 64}}});
  EXPECT_THAT(build_error(dir_),
              ::testing::HasSubstr("tensor model.embed_tokens.weight has unsupported dtype I8"));
}

TEST_F(BuilderErrors, UnsupportedArchitecture) {
  json c = json::parse(llama_config_text());
  c["architectures"] = {"GPT2LMHeadModel"};
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("unsupported architecture GPT2LMHeadModel"));
}

TEST_F(BuilderErrors, MissingConfigField) {
  json c = json::parse(llama_config_text());
  c.erase("hidden_size");
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("field hidden_size"));
}

TEST_F(BuilderErrors, UnsupportedRopeScaling) {
  json c = json::parse(llama_config_text());
  c["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 4.0}};  // dynamic NTK: recomputed per length, not built
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("unsupported rope_scaling type dynamic"));
}

// partial_rotary_factor: phi3 only (Phi-4-mini; transformers rotates the whole head of the others), in (0, 1], and
// giving an even number >= 2 of rotating dims.
TEST_F(BuilderErrors, PartialRotaryOutsidePhi3OrOutOfRange) {
  json c = json::parse(llama_config_text());
  c["partial_rotary_factor"] = 0.5;
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("is supported for phi3 (Phi-4-mini) only"));
  c["architectures"] = {"Phi3ForCausalLM"};
  for (double bad : {0.0, 1.5, -0.25}) {
    c["partial_rotary_factor"] = bad;
    write_text(dir_ + "/config.json", c.dump());
    EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("partial_rotary_factor must be in (0, 1]")) << bad;
  }
  const int64_t head = c["hidden_size"].get<int64_t>() / c["num_attention_heads"].get<int64_t>();
  c["partial_rotary_factor"] = 1.0 / (double)head;  // one rotating dim: not a pair
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("must be even and >= 2"));
}

TEST_F(BuilderErrors, ShardedIndexNamesMissingShardTensor) {
  write_safetensors(dir_ + "/a.safetensors", {{"model.embed_tokens.weight", "F32", {2048, 64}}});
  json idx = {{"weight_map", {{"model.embed_tokens.weight", "a.safetensors"}, {"model.norm.weight", "a.safetensors"}}}};
  write_text(dir_ + "/model.safetensors.index.json", idx.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("tensor model.norm.weight is not in shard a.safetensors"));
}

// A full random llama checkpoint in model.safetensors plus `extra` in a second shard, joined by an index.
std::string error_with_extra_tensor(const std::string& dir, const std::string& extra, char fill) {
  write_text(dir + "/shape.json", llama_config_text());
  write_random_checkpoint(dir + "/shape.json", dir);
  write_safetensors(dir + "/extra.safetensors", {{extra, "F32", {64}}}, fill);
  json idx = {{"weight_map", json::object()}};
  SafeTensors st = SafeTensors::open_dir(dir);
  for (const auto& [name, t] : st.tensors()) idx["weight_map"][name] = "model.safetensors";
  idx["weight_map"][extra] = "extra.safetensors";
  write_text(dir + "/model.safetensors.index.json", idx.dump());
  return build_error(dir);
}

TEST_F(BuilderErrors, UnusedNonzeroTensorIsNamed) {
  // Llama with attention_bias: the builder has no o_proj bias, so converting would drop it.
  EXPECT_THAT(error_with_extra_tensor(dir_, "model.layers.1.self_attn.o_proj.bias", '\x3f'),
              ::testing::HasSubstr("tensor model.layers.1.self_attn.o_proj.bias in the checkpoint is not used"));
}

TEST_F(BuilderErrors, UnusedZeroTensorIsAccepted) {
  EXPECT_EQ(error_with_extra_tensor(dir_, "model.layers.1.self_attn.o_proj.bias", '\0'), "<no error>");
}

TEST_F(BuilderErrors, TensorInTwoShards) {
  write_safetensors(dir_ + "/a.safetensors", {{"model.norm.weight", "F32", {64}}});
  write_safetensors(dir_ + "/b.safetensors", {{"model.norm.weight", "F32", {64}}});
  json idx = {{"weight_map", {{"model.norm.weight", "a.safetensors"}, {"x", "b.safetensors"}}}};
  write_text(dir_ + "/model.safetensors.index.json", idx.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("tensor model.norm.weight is also in another safetensors file"));
}

TEST_F(BuilderErrors, BytesInconsistentWithShape) {
  write_safetensors(dir_ + "/model.safetensors", {{"model.embed_tokens.weight", "F32", {2048, 64}}});
  std::string f = read_file(dir_ + "/model.safetensors");
  // Claim F16 for F32-sized data: the byte count no longer matches the shape.
  size_t pos = f.find("\"F32\"");
  f.replace(pos, 5, "\"F16\"");
  write_text(dir_ + "/model.safetensors", f);
  EXPECT_THAT(build_error(dir_),
              ::testing::HasSubstr("tensor model.embed_tokens.weight has 524288 bytes but its shape needs 262144"));
}

TEST_F(BuilderErrors, BadSlidingWindow) {
  json c = json::parse(llama_config_text());
  c["architectures"] = {"MistralForCausalLM"};
  c["sliding_window"] = 1;
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("sliding_window must be at least 2"));
  c["sliding_window"] = 8;
  c["layer_types"] = {"sliding_attention"};
  write_text(dir_ + "/config.json", c.dump());
  EXPECT_THAT(build_error(dir_), ::testing::HasSubstr("layer_types has 1 entries for 2 layers"));
}

TEST(Safetensors, ShardedAndDtypes) {
  std::string dir = temp_dir("shards");
  write_safetensors(dir + "/a.safetensors", {{"x", "BF16", {2, 3}}});
  write_safetensors(dir + "/b.safetensors", {{"y", "F16", {4}}});
  json idx = {{"weight_map", {{"x", "a.safetensors"}, {"y", "b.safetensors"}}}};
  write_text(dir + "/model.safetensors.index.json", idx.dump());
  SafeTensors st = SafeTensors::open_dir(dir);
  EXPECT_EQ(st.get("x").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(st.get("y").dtype, StDtype::F16);
  std::vector<float> v(3, 1.0f);
  st.read_rows(st.get("x"), 1, 1, v.data());
  EXPECT_EQ(v, (std::vector<float>{0, 0, 0}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ogx::builder::test
