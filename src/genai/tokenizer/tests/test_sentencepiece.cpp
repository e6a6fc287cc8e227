// SentencePiece tokenizer.model folders: trains a tiny BPE model with libsentencepiece, then loads the folder.
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <random>

#include "test_util.h"

namespace ogx::tok::test {
namespace {

class SentencePieceFolder : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (std::filesystem::temp_directory_path() / ("ogx_sp_test_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir_);
    std::ofstream corpus(dir_ + "/corpus.txt");
    const char* words[] = {"hello", "world", "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog",
                           "token", "stream", "model", "café", "naïve", "東京", "data", "one", "two", "three"};
    std::mt19937 rng(3);
    for (int line = 0; line < 400; ++line) {
      for (int w = 0; w < 8; ++w) corpus << (w ? " " : "") << words[rng() % 20];
      corpus << "\n";
    }
    corpus.close();
    auto st = sentencepiece::SentencePieceTrainer::Train(
        "--input=" + dir_ + "/corpus.txt --model_prefix=" + dir_ + "/tokenizer --vocab_size=400 --model_type=bpe "
        "--byte_fallback=true --character_coverage=1.0 --minloglevel=2");
    ok_ = st.ok();
    msg_ = st.ToString();
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  void SetUp() override {
    if (!ok_) GTEST_FAIL() << "SentencePiece training failed: " << msg_;
  }
  static std::string dir_, msg_;
  static bool ok_;
};
std::string SentencePieceFolder::dir_, SentencePieceFolder::msg_;
bool SentencePieceFolder::ok_ = false;

TEST_F(SentencePieceFolder, EncodeDecodeStream) {
  auto tok = Tokenizer::load(dir_);
  EXPECT_EQ(tok->bos_token_id(), 1);  // no tokenizer_config.json: Llama-style defaults
  EXPECT_EQ(tok->eos_token_ids(), std::vector<int32_t>{2});
  EXPECT_EQ(tok->encode("hello")[0], 1);
  EXPECT_EQ(tok->token_to_id("<s>"), 1);
  EXPECT_EQ(tok->token_to_id("definitely-not-a-piece"), -1);
  std::string text = "hello world, the quick café 東京 ünknown ☃";
  auto ids = tok->encode(text, false);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(tok->decode(ids, true), text);
  TokenizerStream s(tok, true);
  std::string streamed;
  for (int32_t id : ids) streamed += s.decode(id);
  EXPECT_EQ(streamed + s.flush(), text);
  EXPECT_THROW(tok->decode(std::vector<int32_t>{static_cast<int32_t>(tok->vocab_size())}), ogx::Error);
  EXPECT_TRUE(tok->is_special(1));
}

TEST_F(SentencePieceFolder, ConfigAddsBos) {
  std::ofstream cfg(dir_ + "/tokenizer_config.json");
  cfg << R"({"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true})";
  cfg.close();
  auto tok = Tokenizer::load(dir_);
  std::filesystem::remove(dir_ + "/tokenizer_config.json");
  EXPECT_EQ(tok->bos_token_id(), 1);
  EXPECT_EQ(tok->eos_token_ids(), std::vector<int32_t>{2});
  auto ids = tok->encode("hello world");
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(tok->decode(ids, true), "hello world");
}

}  // namespace
}  // namespace ogx::tok::test
