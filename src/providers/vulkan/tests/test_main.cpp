#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "providers/vulkan/tests/vk_test_util.h"

namespace ogx::vk::test {

namespace {
std::unique_ptr<Context> ctx;
std::string error;
bool tried = false;

// Destroys the shared context after the last test, before exit: at static destruction the driver and layer
// libraries may already be torn down.
class ContextEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { ctx.reset(); }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new ContextEnvironment);
}  // namespace

Context* context(std::string* why) {
  if (!tried) {
    tried = true;
    InstanceOptions inst;
    inst.validation = true;
    for (const char* type : {"gpu", "cpu"}) {
      try {
        std::map<std::string, std::string> options{{"hardware_device_type", type}};
        // OGX_VULKAN_TEST_TUNING: the provider option `tuning` for the shared context (e.g. the whole suite with
        // q4_wide_rows=2 on a device whose row has 4).
        if (const char* t = std::getenv("OGX_VULKAN_TEST_TUNING")) options["tuning"] = t;
        ctx = Context::create(options, inst);
        break;
      } catch (const Error& e) {
        error = e.what();
      }
    }
    if (ctx) std::printf("[vulkan tests] device: %s (%s), subgroup %u, tuning row %s\n", ctx->info().name.c_str(),
                         ctx->info().driver_name.c_str(), ctx->info().subgroup_size, ctx->tuning().row.c_str());
  }
  if (!ctx && why) *why = error;
  return ctx.get();
}

void VulkanTest::SetUp() {
  std::string why;
  ctx_ = context(&why);
  if (!ctx_) GTEST_SKIP() << "no Vulkan device for the tests (install mesa-vulkan-drivers for lavapipe): " << why;
  messages_at_start_ = Instance::validation_message_count();
}

void VulkanTest::TearDown() {
  if (!ctx_) return;
  ctx_->wait_idle();
  buffers_.clear();
  int n = Instance::validation_message_count() - messages_at_start_;
  if (n > 0) {
    std::string all;
    for (auto& m : Instance::validation_messages()) all += "\n  " + m;
    ADD_FAILURE() << n << " Vulkan validation message(s):" << all;
  }
}

Tensor host_tensor(const std::vector<float>& values, DType dtype, Shape shape) {
  Tensor t(dtype, shape);
  EXPECT_EQ((size_t)t.numel(), values.size());
  for (size_t i = 0; i < values.size(); i++) {
    if (dtype == DType::f32) t.data<float>()[i] = values[i];
    else t.data<uint16_t>()[i] = f32_to_f16(values[i]);
  }
  return t;
}

ContextOptions options_like(const Context& base) {
  ContextOptions o;
  o.provider = base.options();
  o.provider.hardware_type = base.info().type == DeviceType::cpu ? HardwareType::cpu : HardwareType::gpu;
  o.instance.validation = true;
  o.tuning = base.tuning();
  o.block_bytes = 16 << 20;
  return o;
}

TensorView upload_to(Context& ctx, std::vector<DeviceBuffer>& keep, const std::vector<float>& values, DType dtype,
                     Shape shape) {
  Tensor t = host_tensor(values, dtype, shape);
  keep.push_back(ctx.memory().allocate("test", t.bytes()));
  TensorView v = keep.back().view(dtype, shape);
  ctx.transfers().upload_tensor(v, t);
  return v;
}

TensorView VulkanTest::upload(const std::vector<float>& values, DType dtype, Shape shape) {
  return upload_to(ctx(), buffers_, values, dtype, shape);
}

TensorView VulkanTest::upload_i64(const std::vector<int64_t>& values, Shape shape) {
  buffers_.push_back(ctx().memory().allocate("test i64", values.size() * 8));
  TensorView v = buffers_.back().view(DType::i64, shape);
  ctx().transfers().upload(v.mem, 0, values.data(), values.size() * 8);
  return v;
}

TensorView VulkanTest::upload_i32(const std::vector<int32_t>& values, Shape shape) {
  buffers_.push_back(ctx().memory().allocate("test i32", values.size() * 4));
  TensorView v = buffers_.back().view(DType::i32, shape);
  ctx().transfers().upload(v.mem, 0, values.data(), values.size() * 4);
  return v;
}

TensorView VulkanTest::empty(DType dtype, Shape shape) {
  size_t bytes = (size_t)shape_numel(shape) * dtype_size(dtype);
  buffers_.push_back(ctx().memory().allocate("test out", bytes));
  TensorView v = buffers_.back().view(dtype, shape);
  ctx().transfers().fill_zero(buffers_.back().slice());
  return v;
}

std::vector<float> VulkanTest::download(const TensorView& t) { return download_from(ctx(), t); }

std::vector<float> download_from(Context& ctx, const TensorView& t) {
  Tensor h = ctx.transfers().download_tensor(t);
  std::vector<float> out(h.numel());
  for (size_t i = 0; i < out.size(); i++) {
    if (t.dtype == DType::f32) out[i] = h.data<float>()[i];
    else if (t.dtype == DType::f16) out[i] = f16_to_f32(h.data<uint16_t>()[i]);
    else if (t.dtype == DType::i32) out[i] = (float)h.data<int32_t>()[i];
    else if (t.dtype == DType::i64) out[i] = (float)h.data<int64_t>()[i];
  }
  return out;
}

std::vector<float> random_values(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> round_to(const std::vector<float>& v, DType dtype) {
  if (dtype != DType::f16) return v;
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); i++) out[i] = f16_to_f32(f32_to_f16(v[i]));
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rel, double atol,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double worst = -1;  // largest |got - want| - (rel |want| + atol); must stay <= 0
  size_t at = 0;
  for (size_t i = 0; i < got.size(); i++) {
    double excess = std::fabs(got[i] - want[i]) - (rel * std::fabs(want[i]) + atol);
    if (!(excess <= worst)) worst = excess, at = i;  // NaN counts as worst
  }
  EXPECT_LE(worst, 0.0) << what << ": worst element " << at << " got " << got[at] << " want " << want[at]
                        << " (rel " << rel << ", atol " << atol << ")";
}

}  // namespace ogx::vk::test
