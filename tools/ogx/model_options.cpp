#include "model_options.h"

namespace ogx::cli {

genai::Config model_config(const std::string& dir, const Args& a) {
  genai::Config c = genai::Config::load(dir);
  apply_model_options(c, a);
  return c;
}

void apply_model_options(genai::Config& c, const Args& a) {
  std::string provider = a.get("provider");
  if (!provider.empty()) {
    genai::canonical_provider(provider);
    c.clear_providers();
    if (provider != "cpu") c.append_provider(provider);
  }
  for (const std::string& kv : a.get_all("provider-option")) {
    auto eq = kv.find('=');
    OGX_CHECK(eq != std::string::npos && eq > 0, "--provider-option needs KEY=VALUE, got '", kv, "'");
    auto& ps = c.model.decoder.session.providers;
    OGX_CHECK(!ps.empty(), "--provider-option ", kv, " given, but no GPU provider is selected (use --provider vulkan)");
    c.set_provider_option(ps.front().name, kv.substr(0, eq), kv.substr(eq + 1));
  }
  if (a.has("threads")) {
    int t = a.get_int("threads", 0);
    OGX_CHECK(t >= 0, "--threads must be >= 0");
    c.model.decoder.session.intra_op_num_threads = t;
  }
}

}  // namespace ogx::cli
