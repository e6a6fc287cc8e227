#include "providers/vulkan/pipeline.h"

#include <chrono>

namespace ogx::vk {

PipelineLibrary::PipelineLibrary(VkDevice device, VkDeviceAddress chain_counters)
    : device_(device), chain_counters_(chain_counters) {
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
  VkPipelineLayoutCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  info.pushConstantRangeCount = 1;
  info.pPushConstantRanges = &range;
  OGX_VK(vkCreatePipelineLayout(device_, &info, nullptr, &layout_));
}

PipelineLibrary::~PipelineLibrary() {
  for (auto& [k, p] : pipelines_) vkDestroyPipeline(device_, p->pipeline, nullptr);
  vkDestroyPipelineLayout(device_, layout_, nullptr);
}

const Pipeline& PipelineLibrary::get(const std::string& shader, const std::vector<uint32_t>& spec) {
  std::string key = shader;
  for (uint32_t v : spec) key += "/" + std::to_string(v);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return *it->second;

  const auto t0 = std::chrono::steady_clock::now();
  const ShaderCode* code = find_shader(shader);
  OGX_CHECK(code, "no embedded shader named '", shader, "'");
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = code->word_count * 4;
  mi.pCode = code->words;
  VkShaderModule module;
  OGX_VK(vkCreateShaderModule(device_, &mi, nullptr, &module));

  const bool chain = shader.size() > 6 && shader.compare(shader.size() - 6, 6, "_chain") == 0;
  std::vector<uint32_t> values = spec;
  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < spec.size(); i++) entries.push_back({i, i * 4, 4});
  if (chain) {  // shaders/chain.glsl: the counters' address
    OGX_CHECK(chain_counters_, "pipeline ", shader, ": chained dispatches are off");
    entries.push_back({100, (uint32_t)values.size() * 4, 4});
    values.push_back((uint32_t)chain_counters_);
    entries.push_back({101, (uint32_t)values.size() * 4, 4});
    values.push_back((uint32_t)(chain_counters_ >> 32));
  }
  VkSpecializationInfo si{(uint32_t)entries.size(), entries.data(), values.size() * 4, values.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = values.empty() ? nullptr : &si;
  ci.layout = layout_;
  auto p = std::make_unique<Pipeline>();
  p->name = key;
  p->shader = shader;
  p->spec = spec;
  p->chain = chain;
  p->layout = layout_;
  VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &p->pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  create_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r != VK_SUCCESS) throw_error("building pipeline ", key, " failed: ", result_name(r));
  return *(pipelines_[key] = std::move(p));
}

const Pipeline* PipelineLibrary::chained(const Pipeline& p) {
  if (!p.chained_known) {
    p.chained_known = true;
    if (chain_counters_ && !p.chain && find_shader(p.shader + "_chain")) p.chained = &get(p.shader + "_chain", p.spec);
  }
  return p.chained;
}

}  // namespace ogx::vk
