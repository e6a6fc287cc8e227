// Helpers of the C/C++ API tests: the test model folders and C result checks.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "ogx/ogx.h"

namespace ogx_api_test {

// build/api-test-models/llama-<variant>: a golden model with the tiny tokenizer; "" when ../shared is absent.
inline std::string model_dir(const std::string& variant = "fp32-cpu") {
  std::string d = std::string(OGX_TEST_MODELS) + "/llama-" + variant;
  return std::filesystem::exists(d + "/genai_config.json") ? d : std::string();
}

#define OGX_REQUIRE_MODEL(dir_var, variant)                                                      \
  std::string dir_var = ::ogx_api_test::model_dir(variant);                                      \
  if (dir_var.empty()) GTEST_SKIP() << "../shared is absent (golden models): test skipped"

// The message of an error result ("" for success); frees the result.
inline std::string error_of(OgxResult* r) {
  std::string m = r ? OgxResultGetError(r) : "";
  OgxDestroyResult(r);
  return m;
}

// The code of a result; frees it.
inline OgxErrorCode code_of(OgxResult* r) {
  OgxErrorCode c = OgxResultGetCode(r);
  OgxDestroyResult(r);
  return c;
}

#define EXPECT_OK(call) EXPECT_EQ(::ogx_api_test::error_of(call), "")
#define ASSERT_OK(call) ASSERT_EQ(::ogx_api_test::error_of(call), "")

}  // namespace ogx_api_test
