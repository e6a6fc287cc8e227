// Compute pipelines built from the SPIR-V embedded at build time (shaders/*.comp compiled by glslc). One pipeline
// layout for all kernels: no descriptor sets (tensors are addressed by buffer device address) and a 128-byte
// push-constant block, whose last word carries a chained variant's wait (shaders/chain.glsl).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "providers/vulkan/vk_api.h"

namespace ogx::vk {

constexpr uint32_t kPushConstantBytes = 128;  // guaranteed minimum maxPushConstantsSize
constexpr uint32_t kChainPushOffset = 124;    // a chained variant's count to wait for (its kernel's fields end
constexpr uint32_t kChainPushBytes = 4;       // before)

struct ShaderCode {
  const char* name;       // variant name, e.g. "matvec_f16"
  const uint32_t* words;  // SPIR-V
  size_t word_count;
};
const ShaderCode* find_shader(const std::string& name);  // generated registry; null when unknown
std::vector<std::string> shader_names();

struct Pipeline {
  std::string name;  // variant name + specialization values
  std::string shader;          // variant name
  std::vector<uint32_t> spec;  // specialization values
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  bool chain = false;  // a CHAIN variant (takes the chain push constants)
  // Its chained twin (<shader>_chain, same specialization), once looked up by PipelineLibrary::chained.
  mutable const Pipeline* chained = nullptr;
  mutable bool chained_known = false;
};

class PipelineLibrary {
 public:
  // chain_counters: the address of the context's chained-dispatch counters (specialization constants 100 and 101 of
  // every *_chain pipeline); 0: no chained pipelines.
  PipelineLibrary(VkDevice device, VkDeviceAddress chain_counters);
  ~PipelineLibrary();
  PipelineLibrary(const PipelineLibrary&) = delete;
  PipelineLibrary& operator=(const PipelineLibrary&) = delete;
  // Shader variant with specialization constants 0..n-1 = spec (uint32 each); built on first use, then cached.
  const Pipeline& get(const std::string& shader, const std::vector<uint32_t>& spec = {});
  // The chained twin of p (built on first use), or null where there is none or chaining is off.
  const Pipeline* chained(const Pipeline& p);
  size_t size() const { return pipelines_.size(); }
  double create_ms() const { return create_ms_; }  // time spent building pipelines (driver compiles)

 private:
  VkDevice device_;
  VkDeviceAddress chain_counters_ = 0;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  double create_ms_ = 0;
};

}  // namespace ogx::vk
