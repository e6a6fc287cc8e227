// Size and depth limits of tokenizer loading (issue 17): an xz bomb is refused before it fills memory, deeply nested
// tokenizer.json / chat messages fail before any recursion, a directory is named as one. No goldens needed.
#include <lzma.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace ogx::tok::test {
namespace {

namespace fs = std::filesystem;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ogx::Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::string xz(const std::string& data) {
  std::string out(data.size() / 100 + (1 << 16), '\0');
  size_t pos = 0;
  lzma_ret r = lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, nullptr, reinterpret_cast<const uint8_t*>(data.data()),
                                       data.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
  EXPECT_EQ(r, LZMA_OK);
  out.resize(pos);
  return out;
}

class TokenizerLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ogx_tok_limits_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TokenizerLimits, XzBombIsRefused) {
  // 96 MiB of spaces compress to about 15 KB: far past 100x the compressed size and the 64 MiB floor.
  std::string bomb = xz(std::string(96u << 20, ' '));
  ASSERT_LT(bomb.size(), 1u << 20);
  std::ofstream(dir_ / "tokenizer.json.xz", std::ios::binary) << bomb;
  auto t0 = std::chrono::steady_clock::now();
  std::string msg = error_of([&] { Tokenizer::load(dir_.string()); });
  EXPECT_NE(msg.find("decompresses to more than"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tokenizer.json.xz"), std::string::npos) << msg;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);
}

TEST_F(TokenizerLimits, SmallXzStillLoads) {
  std::string json = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})";
  std::ofstream(dir_ / "tokenizer.json.xz", std::ios::binary) << xz(json);
  auto t = Tokenizer::load(dir_.string());
  EXPECT_EQ(t->encode("ab", false), (std::vector<int32_t>{2}));
}

TEST_F(TokenizerLimits, DeeplyNestedJsonIsAnError) {
  std::string deep = R"({"model": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(error_of([&] { Tokenizer::from_json(deep); }).find("nested deeper"), std::string::npos);
}

TEST_F(TokenizerLimits, DirectoryAsTokenizerJson) {
  fs::create_directories(dir_ / "tokenizer.json");
  std::string msg = error_of([&] { Tokenizer::load(dir_.string()); });
  EXPECT_NE(msg.find("tokenizer"), std::string::npos) << msg;
}

// fuzz_tokenizer finding: an id past int32 was truncated to a negative index (heap overflow); a large one sized a
// per-id table of gigabytes. Both are errors naming the entry now.
TEST_F(TokenizerLimits, TokenIdsAreRangeChecked) {
  for (const char* id : {"4294967296", "2147483648", "2000000000", "-1", "1.5"}) {
    std::string bpe = std::string(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": )") + id + R"(}, "merges": []}})";
    EXPECT_NE(error_of([&] { Tokenizer::from_json(bpe); }).find("model.vocab[\"b\"]"), std::string::npos) << id;
    std::string wp = std::string(R"({"model": {"type": "WordPiece", "vocab": {"a": 0, "b": )") + id + "}}}";
    EXPECT_NE(error_of([&] { Tokenizer::from_json(wp); }).find("token id"), std::string::npos) << id;
    std::string added = std::string(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
        "added_tokens": [{"content": "<x>", "id": )") + id + "}]}";
    EXPECT_NE(error_of([&] { Tokenizer::from_json(added); }).find("added_tokens[0].id"), std::string::npos) << id;
  }
}

#ifdef OGX_HAVE_CHAT_TEMPLATE
TEST_F(TokenizerLimits, DeeplyNestedChatMessagesAreAnError) {
  std::string json = R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})";
  std::ofstream(dir_ / "tokenizer.json") << json;
  std::ofstream(dir_ / "tokenizer_config.json") << R"({"chat_template": "{{ messages | length }}"})";
  auto t = Tokenizer::load(dir_.string());
  std::string deep = "[" + std::string(300000, '[') + std::string(300000, ']') + "]";
  std::string msg = error_of([&] { t->apply_chat_template(deep, true); });
  EXPECT_NE(msg.find("apply_chat_template: messages: JSON nested deeper"), std::string::npos) << msg;
  EXPECT_EQ(t->apply_chat_template(R"([{"role": "user", "content": "[[[[[[[["}])", true), "1");
}
#endif

}  // namespace
}  // namespace ogx::tok::test
