// OGX_PROVIDER_OPTIONS: default provider options from the environment, so that code written for another machine
// runs unchanged — e.g. DirectML code on a Linux box whose only Vulkan device is a CPU driver:
//   OGX_PROVIDER_OPTIONS='{"dml": {"hardware_device_type": "cpu"}}'
// The value is a JSON object {provider: {key: value}}. At model creation, each provider the config selects
// receives the options given for it (under any of its names: "dml" and "vulkan" are one provider) that the config
// does not already set. It never selects a provider by itself.
#pragma once
#include "genai/config.h"

namespace ogx::api {

// Applies $OGX_PROVIDER_OPTIONS to the config (no-op when unset or empty); throws ogx::Error naming the variable
// when its value is malformed.
void apply_provider_env(ogx::genai::Config& config);
// Same with an explicit value (for tests).
void apply_provider_options_json(ogx::genai::Config& config, const std::string& json_text);

}  // namespace ogx::api
