// Test support: one validated Vulkan context per test binary (Khronos validation with synchronization checks; any
// message fails the test), seeded random data, host<->device helpers and fp16 rounding.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/half.h"
#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::test {

// The shared context: a GPU if present, else a CPU driver (lavapipe). Null (with *why) when there is none.
Context* context(std::string* why);

// Fixture: skips without a device; fails when validation reported anything during the test.
class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  Context& ctx() { return *ctx_; }
  // Uploads host values (fp32 given, stored as dtype) into a fresh device tensor.
  TensorView upload(const std::vector<float>& values, DType dtype, Shape shape);
  TensorView upload_i64(const std::vector<int64_t>& values, Shape shape);
  TensorView upload_i32(const std::vector<int32_t>& values, Shape shape);
  TensorView empty(DType dtype, Shape shape);  // zero-filled
  std::vector<float> download(const TensorView& t);  // as fp32
  std::vector<DeviceBuffer> buffers_;  // keeps test tensors alive
  // Declares n messages this test provokes on purpose.
  void expect_validation_messages(int n) { messages_at_start_ += n; }

 private:
  Context* ctx_ = nullptr;
  int messages_at_start_ = 0;
};

std::vector<float> random_values(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
// Values as stored in dtype (fp16 rounding applied), for references computed from what the device sees.
std::vector<float> round_to(const std::vector<float>& v, DType dtype);
Tensor host_tensor(const std::vector<float>& values, DType dtype, Shape shape);

// Options for a second context on base's device with base's tuning row (to be edited: a kernel variant forced),
// validation on and 16 MiB device blocks.
ContextOptions options_like(const Context& base);

// Device tensors of any context (kept alive in `keep`, which must go before the context), and their values as fp32.
TensorView upload_to(Context& ctx, std::vector<DeviceBuffer>& keep, const std::vector<float>& values, DType dtype,
                     Shape shape);
std::vector<float> download_from(Context& ctx, const TensorView& t);

// max |got - want| / (|want| + atol_scale) over all elements; reports the worst index.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rel, double atol,
                  const char* what);

}  // namespace ogx::vk::test
