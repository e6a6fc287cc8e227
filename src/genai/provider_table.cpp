// The table of execution providers compiled into this build.
#include "genai/model.h"
#include "providers/cpu/cpu_provider.h"
#ifdef OGX_HAVE_VULKAN
#include "providers/vulkan/graph/vulkan_session.h"
#endif

namespace ogx::genai {

std::unique_ptr<Session> create_provider_session(const std::string& provider, std::shared_ptr<const ogx::Model> model,
                                                 const SessionOptions& opts) {
  if (provider == "cpu") {
    for (auto& kv : opts.provider_options) {
      if (kv.first == "int4_gemm") {  // MatMulNBits' int4 GEMM for prompts (providers/cpu/matmul_nbits.cpp)
        if (kv.second != "auto" && kv.second != "mlas")
          throw_error("cpu provider: int4_gemm must be 'auto' or 'mlas', got '", kv.second, "'");
      } else if (kv.first != "intra_op_num_threads") {
        throw_error("cpu provider: unknown option '", kv.first, "'");
      }
    }
    return cpu::make_cpu_provider()->create_session(std::move(model), opts);
  }
  if (provider == "vulkan") {
#ifdef OGX_HAVE_VULKAN
    return vk::create_vulkan_session(std::move(model), opts);
#else
    throw_error("this build of ogx has no vulkan (dml) provider (built with -DOGX_WITH_VULKAN=OFF); use cpu");
#endif
  }
  throw_error("unknown execution provider '", provider, "' (known: cpu, vulkan, dml)");
}

std::vector<std::string> available_providers() {
#ifdef OGX_HAVE_VULKAN
  return {"cpu", "vulkan"};
#else
  return {"cpu"};
#endif
}

}  // namespace ogx::genai
