// Structured output through the C ABI (OgxGeneratorParamsSetGuidance) and the C++ wrapper (SetGuidance): argument
// and constraint errors come back as results naming the problem, a constrained generation ends in output the
// constraint accepts, and an empty type removes the constraint.
#include "ogx/ogx.hpp"

#include <regex>

#include <nlohmann/json.hpp>

#include "api_test_util.h"

using ogx_api_test::error_of;

TEST(CAbiGuidance, ErrorsNameTheProblem) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  auto model = ogx::Model::Create(dir.c_str());
  auto params = ogx::GeneratorParams::Create(*model);
  OgxGeneratorParams* p = params->get();
  EXPECT_EQ(error_of(OgxGeneratorParamsSetGuidance(nullptr, "regex", "a", false)),
            "OgxGeneratorParamsSetGuidance: params is NULL");
  EXPECT_EQ(error_of(OgxGeneratorParamsSetGuidance(p, nullptr, "a", false)),
            "OgxGeneratorParamsSetGuidance: type is NULL");
  EXPECT_EQ(error_of(OgxGeneratorParamsSetGuidance(p, "regex", nullptr, false)),
            "OgxGeneratorParamsSetGuidance: data is NULL");
  EXPECT_NE(error_of(OgxGeneratorParamsSetGuidance(p, "yaml", "a: 1", false)).find("unknown guidance type 'yaml'"),
            std::string::npos);
  EXPECT_NE(error_of(OgxGeneratorParamsSetGuidance(p, "json_schema", R"({"type":"strin"})", false))
                .find("unknown type 'strin'"),
            std::string::npos);
  EXPECT_NE(error_of(OgxGeneratorParamsSetGuidance(p, "regex", "(a", false)).find("missing ')'"), std::string::npos);
  EXPECT_NE(error_of(OgxGeneratorParamsSetGuidance(p, "lark_grammar", "start: x\n", false)).find("'x'"),
            std::string::npos);
  EXPECT_EQ(error_of(OgxGeneratorParamsSetGuidance(p, "json_object", nullptr, false)), "");  // data not needed
  EXPECT_EQ(error_of(OgxGeneratorParamsSetGuidance(p, "", nullptr, false)), "");            // removes it
}

TEST(CAbiGuidance, ConstrainedGenerationThroughTheWrapper) {
  OGX_REQUIRE_MODEL(dir, "fp32-cpu");
  auto model = ogx::Model::Create(dir.c_str());
  auto tokenizer = ogx::Tokenizer::Create(*model);
  const std::pair<const char*, const char*> cases[] = {
      {"regex", "(red|green|blue)-[0-9]{2}"},
      {"json_schema", R"({"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9}},)"
                      R"("required":["n"],"additionalProperties":false,"x-guidance":{"whitespace_flexible":false}})"},
  };
  for (auto& [type, data] : cases) {
    auto params = ogx::GeneratorParams::Create(*model);
    params->SetSearchOption("max_length", 64);
    params->SetGuidance(type, data);
    auto generator = ogx::Generator::Create(*model, *params);
    int32_t prompt[] = {1, 300, 25};
    generator->AppendTokens(prompt);
    std::vector<int32_t> out;
    while (!generator->IsDone()) {
      generator->GenerateNextToken();
      out.push_back(generator->GetNextTokens()[0]);
    }
    ASSERT_FALSE(out.empty());
    ASSERT_EQ(out.back(), 2) << "the constrained output should end with EOS";
    out.pop_back();
    std::string text = tokenizer->Decode(out);
    if (std::string(type) == "regex") {
      EXPECT_TRUE(std::regex_match(text, std::regex(data))) << text;
    } else {
      auto j = nlohmann::json::parse(text);
      EXPECT_TRUE(j["n"].is_number_integer() && j["n"] >= 1 && j["n"] <= 9) << text;
      EXPECT_EQ(j.size(), 1u) << text;
    }
  }
  auto params = ogx::GeneratorParams::Create(*model);
  EXPECT_THROW(params->SetGuidance("json_schema", "{"), ogx::Exception);
}
