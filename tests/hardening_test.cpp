// Hardening (issue 17): checked size arithmetic, depth limits, thread counts, numeric option ranges and clear
// errors. Each case once crashed, hung, ate memory or gave a silent wrong result; each must now be a clean ogx::Error
// in well under a second (the CTest entry runs this binary under a 4 GB address-space limit, see CMakeLists.txt).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/checked.h"
#include "common/json_limits.h"
#include "common/thread_pool.h"
#include "genai/generator.h"
#include "onnx/loader.h"
#include "model_copy.h"
#include "shared_dir.h"
#include "vulkan_test_config.h"

namespace ogx::test {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

#define EXPECT_ERROR(stmt, needle)                                                     \
  do {                                                                                 \
    std::string msg_ = error_of([&] { stmt; });                                        \
    EXPECT_NE(msg_.find(needle), std::string::npos) << "message: " << msg_;            \
  } while (0)

std::string golden(const std::string& variant = "fp32-cpu") { return shared_dir() + "/golden/models/llama/" + variant; }

// ---- checked arithmetic (src/common/checked.h)

TEST(Checked, MultiplyAndAddDetectOverflow) {
  EXPECT_EQ(mul_checked(int64_t(3), int64_t(5), "x"), 15);
  EXPECT_ERROR(mul_checked(int64_t(1) << 62, int64_t(4), "tensor 'w'"), "tensor 'w'");
  EXPECT_ERROR(mul_checked(int64_t(-1), int64_t(4), "w"), "overflows");
  EXPECT_ERROR(mul_checked(uint64_t(1) << 63, uint64_t(2), "w"), "overflows");
  EXPECT_ERROR(add_checked(std::numeric_limits<int64_t>::max(), int64_t(1), "w"), "overflows");
  EXPECT_ERROR(add_checked(~uint64_t(0), uint64_t(1), "w"), "overflows");
  EXPECT_EQ(add_checked(uint64_t(7), uint64_t(8), "w"), 15u);
}

TEST(Checked, BytesOfAShape) {
  EXPECT_EQ(bytes_checked({2, 3}, DType::f16, "t"), 12u);
  EXPECT_EQ(bytes_checked({}, DType::f32, "t"), 4u);
  EXPECT_EQ(bytes_checked({0, int64_t(1) << 62}, DType::f32, "t"), 0u);
  // [2^62, 1] float32 is 2^64 bytes: it wrapped to 0 before.
  EXPECT_ERROR(bytes_checked({int64_t(1) << 62, 1}, DType::f32, "tensor 'emb'"), "tensor 'emb'");
  EXPECT_ERROR(bytes_checked({int64_t(1) << 40, int64_t(1) << 40}, DType::u8, "t"), "too many elements");
  EXPECT_ERROR(bytes_checked({-1}, DType::u8, "t"), "negative");
  EXPECT_ERROR(bytes_checked(int64_t(1) << 47, 4, "kv"), "kv");
  EXPECT_ERROR(check_range(~uint64_t(0) - 2, 8, 100, "tensor 'w'"), "tensor 'w'");
  EXPECT_NO_THROW(check_range(92, 8, 100, "w"));
}

TEST(Checked, DoubleToInt) {
  int i = 0;
  int64_t l = 0;
  EXPECT_TRUE(double_to_int(-2147483648.0, i));
  EXPECT_EQ(i, INT32_MIN);
  EXPECT_FALSE(double_to_int(2147483648.0, i));
  EXPECT_FALSE(double_to_int(std::ldexp(1.0, 40), i));
  EXPECT_FALSE(double_to_int(1.5, i));
  EXPECT_FALSE(double_to_int(std::nan(""), i));
  EXPECT_FALSE(double_to_int(INFINITY, l));
  EXPECT_FALSE(double_to_int(std::ldexp(1.0, 63), l));
  EXPECT_TRUE(double_to_int(-std::ldexp(1.0, 63), l));
}

TEST(Checked, TensorOfOverflowingShapeIsAnError) {
  EXPECT_ERROR(Tensor(DType::f32, {int64_t(1) << 62, 1}), "float32 [4611686018427387904,1]");
  EXPECT_ERROR(Tensor(DType::f32, {int64_t(1) << 47}), "bytes");
}

// ---- JSON depth (src/common/json_limits.h)

TEST(JsonLimits, DepthPrescan) {
  EXPECT_NO_THROW(check_json_depth(R"({"a": [1, {"b": "[[[[[[[[["}], "c": "\"{"})", "x", 3));
  EXPECT_ERROR(check_json_depth("[[[[1]]]]", "genai_config.json", 3), "genai_config.json: JSON nested deeper than 3");
  std::string deep(100000, '[');
  EXPECT_ERROR(check_json_depth(deep, "f"), "nested deeper than 256");
}

// ---- ONNX loader

struct NoExternal : ExternalDataSource {
  std::shared_ptr<Storage> get(const std::string&) override { return nullptr; }
};

// A buffer of `bytes` bytes standing for an external data file.
struct OneBlob : ExternalDataSource {
  explicit OneBlob(size_t bytes) : st(Storage::allocate(bytes)) {}
  std::shared_ptr<Storage> get(const std::string&) override { return st; }
  std::shared_ptr<Storage> st;
};

TEST(LoaderLimits, InitializerWhoseByteSizeWrapsIsAnError) {
  onnx::TensorProto t;
  t.set_name("embed");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(int64_t(1) << 62);
  t.add_dims(1);
  NoExternal none;
  EXPECT_ERROR(tensor_from_proto(t, none), "tensor 'embed'");
  // The same as external data: no 0-byte view of a 2^64-byte tensor.
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value("w.bin");
  OneBlob blob(64);
  EXPECT_ERROR(tensor_from_proto(t, blob), "tensor 'embed'");
}

TEST(LoaderLimits, HugeExternalOffsetIsAnError) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* kv = t.add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", "w.bin");
  add("offset", "9223372036854775800");
  OneBlob blob(64);
  EXPECT_ERROR(tensor_from_proto(t, blob), "past the end");
  t.mutable_external_data(1)->set_value("-8");
  EXPECT_ERROR(tensor_from_proto(t, blob), "negative external data offset");
  t.mutable_external_data(1)->set_value("99999999999999999999999");
  EXPECT_ERROR(tensor_from_proto(t, blob), "bad external data field offset");
  t.mutable_external_data(1)->set_value("48");
  EXPECT_EQ(tensor_from_proto(t, blob).numel(), 4);
}

TEST(LoaderLimits, TypedFieldCountIsCheckedBeforeAllocating) {
  onnx::TensorProto t;
  t.set_name("big");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(int64_t(1) << 36);  // 256 GiB: must fail on the count, not at the allocation
  t.add_float_data(1.f);
  NoExternal none;
  EXPECT_ERROR(tensor_from_proto(t, none), "has 1 values");
}

TEST(LoaderLimits, EmptyOrDirectoryModelFile) {
  fs::path d = fs::temp_directory_path() / ("ogx_harden_onnx_" + std::to_string(::getpid()));
  fs::create_directories(d / "dir.onnx");
  std::ofstream(d / "empty.onnx").close();
  EXPECT_ERROR(load_model((d / "empty.onnx").string()), "is empty: not an ONNX model");
  EXPECT_ERROR(load_model((d / "dir.onnx").string()), "is a directory");
  fs::remove_all(d);
}

// ---- genai_config.json

TEST(ConfigLimits, DeeplyNestedValueIsAnErrorNotAStackOverflow) {
  std::string deep = R"({"model": {"type": )" + std::string(100000, '[') + std::string(100000, ']') + "}}";
  EXPECT_ERROR(genai::Config::parse(deep, "."), "nested deeper");
  // Just inside the limit: the error names the key, and the message stays short.
  std::string ok = R"({"model": {"type": )" + std::string(200, '[') + std::string(200, ']') + "}}";
  std::string msg = error_of([&] { genai::Config::parse(ok, "."); });
  EXPECT_NE(msg.find("model.type"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 300u) << msg;
}

TEST(ConfigLimits, TokenIdsOutsideInt32AreRejected) {
  EXPECT_ERROR(genai::Config::parse(R"({"model": {"eos_token_id": 4294967982}})", "."), "int32");
  EXPECT_ERROR(genai::Config::parse(R"({"model": {"eos_token_id": [2, -4294967296]}})", "."), "int32");
  EXPECT_ERROR(genai::Config::parse(R"({"model": {"pad_token_id": 4294967982}})", "."), "model.pad_token_id");
  EXPECT_ERROR(genai::Config::parse(R"({"model": {"bos_token_id": 1e300}})", "."), "model.bos_token_id");
  EXPECT_ERROR(genai::Config::parse(R"({"model": {"vocab_size": 18446744073709551615}})", "."), "model.vocab_size");
  EXPECT_EQ(genai::Config::parse(R"({"model": {"eos_token_id": [2, 7]}})", ".").model.eos_token_ids,
            (std::vector<int>{2, 7}));
}

TEST(ConfigLimits, TemperatureMustBeANormalPositiveNumber) {
  EXPECT_ERROR(genai::Config::parse(R"({"search": {"temperature": 1e-45}})", "."), "search.temperature");
  EXPECT_ERROR(genai::Config::parse(R"({"search": {"temperature": 0}})", "."), "do_sample");
  EXPECT_EQ(genai::Config::parse(R"({"search": {"temperature": 0.01}})", ".").search.temperature, 0.01);
}

TEST(ConfigLimits, SearchIntegersOutOfRange) {
  EXPECT_ERROR(genai::Config::parse(R"({"search": {"batch_size": -2147483648}})", "."), "search.batch_size");
  EXPECT_ERROR(genai::Config::parse(R"({"search": {"no_repeat_ngram_size": 1099511627776}})", "."),
               "search.no_repeat_ngram_size");
  EXPECT_ERROR(genai::Config::parse(R"({"search": {"max_length": 1e19}})", "."), "search.max_length");
}

TEST(ConfigLimits, DirectoryAsConfigIsNamed) {
  fs::path d = fs::temp_directory_path() / ("ogx_harden_cfg_" + std::to_string(::getpid()));
  fs::create_directories(d / "genai_config.json");
  EXPECT_ERROR(genai::Config::load(d.string()), "is a directory");
  fs::remove_all(d);
}

TEST(ConfigLimits, JsonErrorsAreWrapped) {
  std::string msg = error_of([] { genai::Config::parse("{\"model\": ", "."); });
  EXPECT_NE(msg.find("genai_config.json is not valid JSON"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
}

// ---- search options (GeneratorParams::set_search_option)

TEST(SearchOptionLimits, RangeCheckedInTheCoreType) {
  OGX_REQUIRE_SHARED();
  auto m = genai::Model::load(golden());
  genai::GeneratorParams p(*m);
  const genai::SearchConfig before = p.search;
  EXPECT_ERROR(p.set_search_option("batch_size", -2147483648.0), "batch_size");
  EXPECT_ERROR(p.set_search_option("batch_size", 2147483648.0), "int32");
  EXPECT_ERROR(p.set_search_option("no_repeat_ngram_size", std::ldexp(1.0, 40)), "no_repeat_ngram_size");
  EXPECT_ERROR(p.set_search_option("max_length", 1e300), "max_length");
  EXPECT_ERROR(p.set_search_option("max_length", std::nan("")), "max_length");
  EXPECT_ERROR(p.set_search_option("top_k", -1), "top_k");
  EXPECT_ERROR(p.set_search_option("random_seed", 1e30), "random_seed");
  EXPECT_ERROR(p.set_search_option("temperature", 1e-45), "temperature");
  EXPECT_ERROR(p.set_search_option("temperature", INFINITY), "temperature");
  EXPECT_ERROR(p.set_search_option("repetition_penalty", INFINITY), "repetition_penalty");
  // A rejected value leaves the params as they were.
  EXPECT_EQ(p.search.temperature, before.temperature);
  EXPECT_EQ(p.search.batch_size, before.batch_size);
  p.set_search_option("no_repeat_ngram_size", 3);
  EXPECT_EQ(p.search.no_repeat_ngram_size, 3);
}

// ---- KV cache growth

TEST(KvCacheLimits, ImpossibleCacheNamesItsSize) {
  OGX_REQUIRE_SHARED();
  genai::Config c = genai::Config::load(golden());
  auto m = genai::Model::load(c);
  genai::GeneratorParams p(*m);
  p.search.max_length = 4096;
  genai::KvCache kv(*m, /*batch=*/1 << 30, /*max_length=*/4096, /*shared=*/true);
  std::vector<NamedTensor> in, out;
  EXPECT_ERROR(kv.bind(4000, in, out), "KV cache");
}

// ---- thread pool

TEST(ThreadLimits, AbsurdThreadCountIsClamped) {
  auto t0 = std::chrono::steady_clock::now();
  ThreadPool pool(100000);
  EXPECT_LE(pool.num_threads(), std::max(8u, std::thread::hardware_concurrency()));
  std::atomic<int64_t> sum{0};
  pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) sum += i;
  });
  EXPECT_EQ(sum.load(), 499500);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// ---- Vulkan Gather: ids checked against the table on the host, as the CPU does

TEST(GatherIds, vulkan_out_of_range_id_is_an_error_as_on_the_cpu) {
  OGX_REQUIRE_SHARED();
  ModelCopy copy(golden("fp16-dml"));
  copy.replace("genai_config.json", "\"vocab_size\": 2048", "\"vocab_size\": 0");  // no generator-side check
  genai::Config c = genai::Config::load(copy.dir());
  select_vulkan(c, /*validation=*/false);
  std::shared_ptr<genai::Model> m;
  try {
    m = genai::Model::load(c);
  } catch (const Error& e) {
    if (no_vulkan_device(e)) GTEST_SKIP() << e.what();
    throw;
  }
  genai::GeneratorParams p(*m);
  p.search.max_length = 16;
  {
    genai::Generator g(m, p);
    EXPECT_ERROR(g.append_tokens({1, 5000}), "out of range");
  }
  genai::Generator g(m, p);  // the model still runs
  g.append_tokens({1, 2});
  g.generate_next_token();
  EXPECT_EQ(g.token_count(), 3u);
}

}  // namespace
}  // namespace ogx::test
