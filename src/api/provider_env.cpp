#include "api/provider_env.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_limits.h"
#include "common/log.h"

namespace ogx::api {

namespace {

std::string value_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return v.dump();
  throw_error("OGX_PROVIDER_OPTIONS: ", where, " must be a string, number or boolean");
}

bool has_key(const OptionList& list, const std::string& key) {
  for (auto& kv : list)
    if (kv.first == key) return true;
  return false;
}

}  // namespace

void apply_provider_options_json(ogx::genai::Config& config, const std::string& text) {
  nlohmann::json j;
  ogx::check_json_depth(text, "OGX_PROVIDER_OPTIONS");
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw_error("OGX_PROVIDER_OPTIONS is not valid JSON: ", ogx::json_error_text(e));
  }
  OGX_CHECK(j.is_object(), "OGX_PROVIDER_OPTIONS must be a JSON object {provider: {key: value}}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string canonical;
    try {
      canonical = ogx::genai::canonical_provider(it.key());
    } catch (const ogx::Error& e) {
      throw_error("OGX_PROVIDER_OPTIONS: ", e.what());
    }
    OGX_CHECK(it.value().is_object(), "OGX_PROVIDER_OPTIONS: \"", it.key(), "\" must map to an object of options");
    for (auto& entry : config.model.decoder.session.providers) {
      std::string entry_canonical;  // an unknown name (accepted by the config) is reported when the model loads
      try {
        entry_canonical = ogx::genai::canonical_provider(entry.name);
      } catch (const ogx::Error&) {
        continue;
      }
      if (entry_canonical != canonical) continue;
      for (auto opt = it.value().begin(); opt != it.value().end(); ++opt) {
        if (has_key(entry.options, opt.key()) || has_key(entry.device_filtering, opt.key())) continue;
        std::string v = value_text(opt.value(), it.key() + "." + opt.key());
        config.set_provider_option(entry.name, opt.key(), v);
        log_info("OGX_PROVIDER_OPTIONS: " + entry.name + " option " + opt.key() + "=" + v);
      }
    }
  }
}

void apply_provider_env(ogx::genai::Config& config) {
  const char* env = std::getenv("OGX_PROVIDER_OPTIONS");
  if (env && *env) apply_provider_options_json(config, env);
}

}  // namespace ogx::api
