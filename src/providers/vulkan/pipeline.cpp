#include "providers/vulkan/pipeline.h"

#include <chrono>

namespace ogx::vk {

PipelineLibrary::PipelineLibrary(VkDevice device, bool capture_statistics)
    : device_(device), capture_statistics_(capture_statistics) {
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
  if (capture_statistics_) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  auto p = std::make_unique<Pipeline>();
  p->name = key;
  p->layout = layout_;
  VkResult r = vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &p->pipeline);
  vkDestroyShaderModule(device_, module, nullptr);
  create_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (r != VK_SUCCESS) throw_error("building pipeline ", key, " failed: ", result_name(r));
  if (capture_statistics_) read_statistics(*p);
  return *(pipelines_[key] = std::move(p));
}

std::vector<const Pipeline*> PipelineLibrary::built() const {
  std::vector<const Pipeline*> v;
  for (auto& [key, p] : pipelines_) v.push_back(p.get());
  return v;
}

// The statistics of the pipeline's executables (a compute pipeline has one; a driver may list more, each
// statistic then named after its executable too). Failures leave the list short: statistics are a diagnostic.
void PipelineLibrary::read_statistics(Pipeline& p) const {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = p.pipeline;
  uint32_t n = 0;
  if (vkGetPipelineExecutablePropertiesKHR(device_, &info, &n, nullptr) != VK_SUCCESS) return;
  std::vector<VkPipelineExecutablePropertiesKHR> exes(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  if (vkGetPipelineExecutablePropertiesKHR(device_, &info, &n, exes.data()) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < n; e++) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = p.pipeline;
    ei.executableIndex = e;
    uint32_t m = 0;
    if (vkGetPipelineExecutableStatisticsKHR(device_, &ei, &m, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(m, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (vkGetPipelineExecutableStatisticsKHR(device_, &ei, &m, st.data()) != VK_SUCCESS) continue;
    const std::string prefix = n > 1 ? std::string(exes[e].name) + " " : std::string();
    for (uint32_t i = 0; i < m; i++) {
      double v;
      switch (st[i].format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: v = st[i].value.b32 ? 1 : 0; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: v = (double)st[i].value.i64; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: v = (double)st[i].value.u64; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: v = st[i].value.f64; break;
        default: continue;
      }
      p.statistics.push_back({prefix + st[i].name, v});
    }
  }
}

}  // namespace ogx::vk
