// Compute pipelines built from the SPIR-V embedded at build time (shaders/*.comp compiled by glslc). One pipeline
// layout for all kernels: no descriptor sets (tensors are addressed by buffer device address) and a 128-byte
// push-constant block.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "providers/vulkan/vk_api.h"

namespace ogx::vk {

constexpr uint32_t kPushConstantBytes = 128;  // guaranteed minimum maxPushConstantsSize

struct ShaderCode {
  const char* name;       // variant name, e.g. "matvec_f16"
  const uint32_t* words;  // SPIR-V
  size_t word_count;
};
const ShaderCode* find_shader(const std::string& name);  // generated registry; null when unknown
std::vector<std::string> shader_names();

// One statistic the driver reports for a pipeline's executable (VK_KHR_pipeline_executable_properties), e.g.
// NVIDIA's "Register Count", Mesa's "Instruction Count"; numeric ones only.
struct PipelineStatistic {
  std::string name;
  double value = 0;
};

struct Pipeline {
  std::string name;  // variant name + specialization values
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  std::vector<PipelineStatistic> statistics;  // with capture_statistics: the compute executable's (else empty)
};

class PipelineLibrary {
 public:
  // capture_statistics: build with VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR and read each pipeline's
  // statistics (the device was created with VK_KHR_pipeline_executable_properties).
  explicit PipelineLibrary(VkDevice device, bool capture_statistics = false);
  ~PipelineLibrary();
  PipelineLibrary(const PipelineLibrary&) = delete;
  PipelineLibrary& operator=(const PipelineLibrary&) = delete;
  // Shader variant with specialization constants 0..n-1 = spec (uint32 each); built on first use, then cached.
  const Pipeline& get(const std::string& shader, const std::vector<uint32_t>& spec = {});
  size_t size() const { return pipelines_.size(); }
  double create_ms() const { return create_ms_; }  // time spent building pipelines (driver compiles)
  // Every pipeline built so far, by key (with capture_statistics their statistics).
  std::vector<const Pipeline*> built() const;

 private:
  void read_statistics(Pipeline& p) const;

  VkDevice device_;
  bool capture_statistics_ = false;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  double create_ms_ = 0;
};

}  // namespace ogx::vk
