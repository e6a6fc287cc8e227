// The header-only C++ wrapper (ogx.hpp): RAII ownership, exceptions carrying the C error code and message, and
// the ort_genai.h-shaped flow.
#include "ogx/ogx.hpp"

#include <nlohmann/json.hpp>

#include "api_test_util.h"

using ogx_api_test::model_dir;

TEST(CppWrapper, ErrorsAreExceptionsWithCodeAndMessage) {
  try {
    ogx::Config config("/nonexistent/folder");
    FAIL() << "expected an exception";
  } catch (const ogx::Exception& e) {
    EXPECT_EQ(e.code(), OgxErrorCode_Runtime);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/folder"), std::string::npos);
  }
  EXPECT_THROW(ogx::IsProviderAvailable("cuda"), ogx::Exception);
  EXPECT_TRUE(ogx::IsProviderAvailable("cpu"));
  EXPECT_FALSE(ogx::Version().empty());
  auto devices = nlohmann::json::parse(ogx::GetAvailableDevices());
  EXPECT_TRUE(devices["devices"].is_array());
  if (devices["devices"].empty()) {
    EXPECT_TRUE(devices["error"].is_string());
  }
}

TEST(CppWrapper, ObjectsAreMoveOnlyOwners) {
  static_assert(!std::is_copy_constructible_v<ogx::Sequences>);
  ogx::Sequences a;
  int32_t ids[2] = {4, 5};
  a.Append(ids);
  ogx::Sequences b = std::move(a);
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.Count(), 1u);
  EXPECT_EQ(b.Get(0)[1], 5);
  EXPECT_THROW(b.Get(3), ogx::Exception);
  // A moved-from object reports the NULL handle as an error rather than crashing.
  try {
    a.Append(ids);
    FAIL();
  } catch (const ogx::Exception& e) {
    EXPECT_EQ(e.code(), OgxErrorCode_InvalidArgument);
    EXPECT_STREQ(e.what(), "OgxAppendTokenSequence: sequences is NULL");
  }
}

TEST(CppWrapper, QuestionAnswerFlow) {
  std::string dir = model_dir("fp32-cpu");
  if (dir.empty()) GTEST_SKIP() << "../shared is absent (golden models): test skipped";
  auto config = ogx::Config::Create(dir.c_str());
  config->ClearProviders();
  config->AppendProvider("cuda");  // accepted by the config, as ONNX Runtime GenAI; the model reports it
  EXPECT_THROW(ogx::Model::Create(*config), ogx::Exception);
  config->ClearProviders();
  auto model = ogx::Model::Create(*config);
  EXPECT_EQ(model->GetType(), "llama");
  EXPECT_EQ(model->GetDeviceType(), "CPU");
  auto tokenizer = ogx::Tokenizer::Create(*model);
  EXPECT_EQ(tokenizer->GetBosTokenId(), 1);
  EXPECT_EQ(tokenizer->GetEosTokenIds(), std::vector<int32_t>{2});
  EXPECT_EQ(tokenizer->GetPadTokenId(), 2);
  EXPECT_EQ(tokenizer->ToTokenId("<|user|>"), 4);
  EXPECT_EQ(tokenizer->ToTokenId("not a single token"), -1);

  std::string prompt = tokenizer->ApplyChatTemplate(nullptr, R"([{"role": "user", "content": "Hello there"}])",
                                                    nullptr, true);
  EXPECT_EQ(prompt, "<s><|user|>\nHello there<|end|>\n<|assistant|>\n");
  std::string custom = tokenizer->ApplyChatTemplate("{% for m in messages %}[{{ m.content }}]{% endfor %}",
                                                    R"([{"role": "user", "content": "x"}])", nullptr, false);
  EXPECT_EQ(custom, "[x]");

  auto sequences = ogx::Sequences::Create();
  tokenizer->Encode(prompt.c_str(), *sequences);
  auto ids = sequences->Get(0);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 1);  // the template's <s> plus the BOS the tokenizer adds
  EXPECT_EQ(tokenizer->Decode(ids), "\nHello there\n\n");  // special tokens skipped

  auto params = ogx::GeneratorParams::Create(*model);
  params->SetSearchOption("max_length", double(ids.size() + 10));
  params->SetSearchOptionBool("do_sample", false);
  EXPECT_THROW(params->SetSearchOption("bogus", 1), ogx::Exception);
  auto generator = ogx::Generator::Create(*model, *params);
  model.reset();  // the generator keeps the model alive
  generator->AppendTokenSequences(*sequences);
  auto stream = ogx::TokenizerStream::Create(*tokenizer);
  std::string streamed;
  std::vector<int32_t> generated;
  while (!generator->IsDone()) {
    generator->GenerateNextToken();
    int32_t t = generator->GetNextTokens()[0];
    generated.push_back(t);
    streamed += stream->Decode(t);
  }
  streamed += stream->Flush();
  EXPECT_EQ(generator->TokenCount(), ids.size() + generated.size());
  EXPECT_EQ(streamed, tokenizer->Decode(generated));
  auto seq = generator->GetSequence(0);
  EXPECT_EQ(std::vector<int32_t>(seq.begin() + (long)ids.size(), seq.end()), generated);
  EXPECT_THROW(generator->GetSequence(1), ogx::Exception);
  EXPECT_THROW(generator->GenerateNextToken(), ogx::Exception);  // done

  auto logits = generator->GetLogits();
  EXPECT_EQ(logits->Type(), OgxElementType_float32);
  EXPECT_EQ(logits->Shape(), (std::vector<int64_t>{1, 1, 2048}));
  generator->RewindTo(ids.size());
  EXPECT_FALSE(generator->IsDone());
  generator->SetLogits(*logits);
}

TEST(CppWrapper, BatchEncodeDecode) {
  std::string dir = model_dir("fp32-cpu");
  if (dir.empty()) GTEST_SKIP() << "../shared is absent (golden models): test skipped";
  ogx::Model model(dir.c_str());
  ogx::Tokenizer tokenizer(model);
  std::vector<std::string> texts = {"The quick brown fox", "Hi", "What is the capital of France?"};
  auto batch = tokenizer.EncodeBatch(texts);
  auto shape = batch->Shape();
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(shape[0], 3);
  auto* data = static_cast<const int32_t*>(batch->Data());
  for (size_t r = 0; r < texts.size(); r++) {
    auto row = tokenizer.Encode(texts[r].c_str());
    for (int64_t c = 0; c < shape[1]; c++)
      EXPECT_EQ(data[r * shape[1] + c], c < (int64_t)row.size() ? row[c] : tokenizer.GetPadTokenId());
  }
  EXPECT_EQ(tokenizer.DecodeBatch(*batch), texts);
  // Id 7 is the byte 0x00: C strings cannot carry U+0000, so it is dropped from text everywhere.
  std::vector<int32_t> with_nul = {1806, 7, 51};
  EXPECT_EQ(tokenizer.Decode(with_nul), tokenizer.Decode(std::vector<int32_t>{1806, 51}));
  ogx::TokenizerStream stream(tokenizer);
  std::string streamed;
  for (int32_t id : with_nul) streamed += stream.Decode(id);
  EXPECT_EQ(streamed + stream.Flush(), tokenizer.Decode(with_nul));
  // int64 input works too.
  std::vector<int64_t> wide = {1, 1806, 51};
  ogx::Tensor t(wide.data(), {1, 3}, OgxElementType_int64);
  EXPECT_EQ(tokenizer.DecodeBatch(t).size(), 1u);
}
