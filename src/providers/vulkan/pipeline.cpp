#include "providers/vulkan/pipeline.h"

#include <chrono>

namespace ogx::vk {

PipelineLibrary::PipelineLibrary(VkDevice device) : device_(device) {
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

  std::vector<VkSpecializationMapEntry> entries;
  for (uint32_t i = 0; i < spec.size(); i++) entries.push_back({i, i * 4, 4});
  VkSpecializationInfo si{(uint32_t)entries.size(), entries.data(), spec.size() * 4, spec.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = spec.empty() ? nullptr : &si;
  ci.layout = layout_;
  auto p = std::make_unique<Pipeline>();
  p->name = key;
  p->layout = layout_;
  VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &p->pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  create_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r != VK_SUCCESS) throw_error("building pipeline ", key, " failed: ", result_name(r));
  return *(pipelines_[key] = std::move(p));
}

}  // namespace ogx::vk
