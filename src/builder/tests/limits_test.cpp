// Size limits of the builder and the safetensors reader: absurd shapes and overflowing headers fail at once, before
// anything is allocated or written, with the computed size in the message (issue 17). No goldens needed.
#include <sys/resource.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "builder/builder.h"
#include "builder/safetensors.h"
#include "common/error.h"
#include "test_util.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ogx::builder::test {
namespace {

json tiny_config() {
  return {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 64},         {"intermediate_size", 128},
          {"num_hidden_layers", 2},                {"num_attention_heads", 4},  {"num_key_value_heads", 2},
          {"vocab_size", 256},                     {"max_position_embeddings", 128}, {"rms_norm_eps", 1e-5}};
}

std::string write_config(const std::string& dir, const json& c) {
  fs::create_directories(dir);
  std::string p = dir + "/config.json";
  std::ofstream(p) << c.dump();
  return p;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

// Runs f and fails the test when it takes longer than `seconds` (a regression would allocate gigabytes first).
template <typename F>
std::string timed_error(double seconds, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  std::string msg = error_of(f);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), seconds) << msg;
  return msg;
}

class BuilderLimits : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = temp_dir("limits"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(BuilderLimits, BillionLayersFailBeforeBuilding) {
  json c = tiny_config();
  c["num_hidden_layers"] = 1000000000;
  BuildOptions o;
  o.config_path = write_config(dir_, c);
  o.num_threads = 1;
  std::string msg = timed_error(2.0, [&] { build_model(o); });
  EXPECT_THAT(msg, ::testing::HasSubstr("num_hidden_layers 1000000000"));
  msg = timed_error(2.0, [&] { write_random_checkpoint(o.config_path, dir_ + "/hf"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("num_hidden_layers 1000000000"));
  EXPECT_FALSE(fs::exists(dir_ + "/hf/model.safetensors"));
}

TEST_F(BuilderLimits, HugeVocabularyFailsWithItsSize) {
  json c = tiny_config();
  c["vocab_size"] = 2000000000;
  c["hidden_size"] = 4096;
  c["num_attention_heads"] = 32;
  c["num_key_value_heads"] = 8;
  BuildOptions o;
  o.config_path = write_config(dir_, c);
  o.num_threads = 1;
  // 2e9 x 4096 x 2 (untied) fp32 values: 6.5e13 bytes, beyond any test machine's memory and disk.
  std::string msg = timed_error(2.0, [&] { build_model(o); });
  EXPECT_THAT(msg, ::testing::HasSubstr("bytes"));
  EXPECT_THAT(msg, ::testing::HasSubstr("parameters"));
  msg = timed_error(2.0, [&] { write_random_checkpoint(o.config_path, dir_ + "/hf"); });
  EXPECT_THAT(msg, ::testing::HasSubstr("free disk space"));
  EXPECT_FALSE(fs::exists(dir_ + "/hf/model.safetensors"));
}

TEST_F(BuilderLimits, OverflowingShapeIsAnError) {
  json c = tiny_config();
  c["vocab_size"] = int64_t(1) << 40;
  c["hidden_size"] = int64_t(1) << 40;
  c["num_attention_heads"] = 1;
  c["num_key_value_heads"] = 1;
  c["head_dim"] = 64;
  BuildOptions o;
  o.config_path = write_config(dir_, c);
  EXPECT_THAT(timed_error(2.0, [&] { build_model(o); }), ::testing::HasSubstr("overflows"));
}

TEST_F(BuilderLimits, ZeroKvHeadsIsAnError) {
  json c = tiny_config();
  c["num_key_value_heads"] = 0;
  BuildOptions o;
  o.config_path = write_config(dir_, c);
  EXPECT_THAT(error_of([&] { build_model(o); }), ::testing::HasSubstr("num_key_value_heads"));
}

TEST_F(BuilderLimits, DeeplyNestedConfigIsAnError) {
  std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  std::ofstream(dir_ + "/config.json") << deep;
  BuildOptions o;
  o.config_path = dir_ + "/config.json";
  EXPECT_THAT(error_of([&] { build_model(o); }), ::testing::HasSubstr("nested deeper"));
}

TEST_F(BuilderLimits, DirectoryAsConfigIsNamed) {
  BuildOptions o;
  o.config_path = dir_;
  EXPECT_THAT(error_of([&] { build_model(o); }), ::testing::HasSubstr("is a directory"));
}

void write_raw_safetensors(const std::string& path, const std::string& header, size_t data_bytes) {
  std::ofstream out(path, std::ios::binary);
  uint64_t len = header.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << header << std::string(data_bytes, '\0');
}

TEST_F(BuilderLimits, SafetensorsOverflowingShape) {
  // 2^62 x 4 elements of 4 bytes: the byte count wraps to 0 in 64 bits.
  write_raw_safetensors(dir_ + "/model.safetensors",
                        R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})", 8);
  SafeTensors st;
  EXPECT_THAT(error_of([&] { st.add_file(dir_ + "/model.safetensors"); }), ::testing::HasSubstr("tensor w"));
}

TEST_F(BuilderLimits, SafetensorsBadFieldsAreNamed) {
  const char* headers[] = {
      R"({"w":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})",
      R"({"w":{"dtype":"F32","shape":"x","data_offsets":[0,4]}})",
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,4]}})",
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":["0",4]}})",
      R"([1,2,3])",
      R"({"w":{"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,4]}})",
  };
  for (const char* h : headers) {
    write_raw_safetensors(dir_ + "/model.safetensors", h, 8);
    SafeTensors st;
    std::string msg = error_of([&] { st.add_file(dir_ + "/model.safetensors"); });
    EXPECT_THAT(msg, ::testing::HasSubstr("model.safetensors")) << h;
    EXPECT_THAT(msg, ::testing::Not(::testing::HasSubstr("json.exception"))) << h;
  }
}

}  // namespace
}  // namespace ogx::builder::test
