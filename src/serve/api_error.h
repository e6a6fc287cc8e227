// An OpenAI-style error answer: HTTP status and {"error": {"message", "type", "param", "code"}}.
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace ogx::serve {

struct ApiError : std::runtime_error {
  int status;
  std::string type;   // invalid_request_error, authentication_error, rate_limit_error, server_error, ...
  std::string param;  // the request field at fault ("" when none)
  ApiError(int status, std::string message, std::string type = "invalid_request_error", std::string param = "")
      : std::runtime_error(std::move(message)), status(status), type(std::move(type)), param(std::move(param)) {}
};

inline nlohmann::json error_body(const std::string& message, const std::string& type, const std::string& param,
                                 int status) {
  nlohmann::json e = {{"message", message}, {"type", type}, {"code", status}};
  e["param"] = param.empty() ? nlohmann::json() : nlohmann::json(param);
  return {{"error", e}};
}

inline nlohmann::json error_body(const ApiError& e) { return error_body(e.what(), e.type, e.param, e.status); }

}  // namespace ogx::serve
