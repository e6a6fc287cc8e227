// The table of execution providers compiled into this build.
#include "genai/model.h"
#include "providers/cpu/cpu_provider.h"

namespace ogx::genai {

std::unique_ptr<Session> create_provider_session(const std::string& provider, std::shared_ptr<const ogx::Model> model,
                                                 const SessionOptions& opts) {
  if (provider == "cpu") {
    for (auto& kv : opts.provider_options)
      if (kv.first != "intra_op_num_threads") throw_error("cpu provider: unknown option '", kv.first, "'");
    return cpu::make_cpu_provider()->create_session(std::move(model), opts);
  }
  if (provider == "vulkan")
    throw_error("the vulkan (dml) provider cannot run model graphs in this build yet: its kernels and device "
                "selection exist (see `ogx devices`), graph execution is not wired; use --provider cpu");
  throw_error("unknown execution provider '", provider, "' (known: cpu, vulkan, dml)");
}

std::vector<std::string> available_providers() { return {"cpu"}; }

}  // namespace ogx::genai
