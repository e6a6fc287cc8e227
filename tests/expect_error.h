// expect_error: runs f and expects an ogx::Error whose message contains `needle` (test helper of the engine tests).
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error.h"

namespace ogx::test {

inline void expect_error(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

}  // namespace ogx::test
