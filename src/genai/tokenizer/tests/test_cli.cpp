// ogx tokenize / chat-template subcommand functions.
#include "genai/tokenizer/cli.h"
#include "test_util.h"

namespace ogx::tok::test {
namespace {

TEST(Cli, TokenizePrintsJson) {
  OGX_REQUIRE_GOLDEN("llama2");
  testing::internal::CaptureStdout();
  int rc = cmd_tokenize({golden_dir("llama2"), "--text", "Hello world", "--json"});
  std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0);
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["ids"].get<std::vector<int32_t>>(), (std::vector<int32_t>{1, 22557, 1526}));
  EXPECT_EQ(j["decoded"], "Hello world");
  EXPECT_EQ(j["decoded_keep_special"], "<s> Hello world");
  testing::internal::CaptureStdout();
  rc = cmd_tokenize({golden_dir("llama2"), "--text", "Hello world", "--no-special", "--json"});
  j = nlohmann::json::parse(testing::internal::GetCapturedStdout());
  EXPECT_EQ(j["ids"].get<std::vector<int32_t>>(), (std::vector<int32_t>{22557, 1526}));
}

TEST(Cli, ErrorsReturnOneUsageErrorsTwo) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(cmd_tokenize({}), 2);                                // no folder, no --text
  EXPECT_EQ(cmd_tokenize({"/nonexistent", "--text", "x"}), 1);   // the folder has no tokenizer
  EXPECT_EQ(cmd_tokenize({"/nonexistent", "--text"}), 2);        // --text without its value
  EXPECT_EQ(cmd_tokenize({"/nonexistent", "--txet", "x"}), 2);   // unknown flag
  EXPECT_EQ(cmd_chat_template({"/nonexistent"}), 2);             // no --messages
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ogx tokenize: unknown flag --txet (did you mean --text?)"), std::string::npos) << err;
  EXPECT_NE(err.find("--messages is required"), std::string::npos) << err;
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_tokenize({"--help"}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("--no-special"), std::string::npos);
  if (have_golden("qwen3")) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(cmd_chat_template({golden_dir("qwen3"), "--messages", "not json"}), 1);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("messages"), std::string::npos);
  }
}

TEST(Cli, ChatTemplate) {
  OGX_REQUIRE_GOLDEN("qwen3");
#ifndef OGX_HAVE_CHAT_TEMPLATE
  GTEST_SKIP() << "Jinja engine (ogx_chat_template) not built yet";
#else
  testing::internal::CaptureStdout();
  int rc = cmd_chat_template({golden_dir("qwen3"), "--messages", R"([{"role": "user", "content": "Hello!"}])",
                              "--add-generation-prompt", "--json"});
  std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(nlohmann::json::parse(out)["text"], "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
#endif
}

}  // namespace
}  // namespace ogx::tok::test
