// Helpers shared by the kernel launchers: shader variant names per storage dtype and dtype checks.
#pragma once
#include <string>

#include "providers/vulkan/command_recorder.h"
#include "providers/vulkan/context.h"

namespace ogx::vk::kernels {

// "f32" or "f16": the storage suffix of a shader variant. Other dtypes: ogx::Error naming `what`.
inline const char* storage_suffix(DType t, const char* what) {
  if (t == DType::f32) return "f32";
  if (t == DType::f16) return "f16";
  throw_error(what, ": the Vulkan kernels take float32 or float16 tensors, got ", dtype_name(t));
}

inline void check_same_dtype(const TensorView& a, const TensorView& b, const char* what) {
  OGX_CHECK(a.dtype == b.dtype, what, ": dtype mismatch (", dtype_name(a.dtype), " vs ", dtype_name(b.dtype), ")");
}

// Kernels over 1-byte elements (bool) need storageBuffer8BitAccess.
inline void check_byte_storage(Context& ctx, DType t, const char* what) {
  OGX_CHECK(dtype_size(t) != 1 || ctx.info().features.storage_8bit, what, ": ", dtype_name(t), " tensors need "
            "storageBuffer8BitAccess, which ", ctx.info().name, " lacks");
}

inline uint64_t addr(const TensorView& t) { return t.mem.address; }
inline uint64_t addr_or_zero(const TensorView* t) { return t ? t->mem.address : 0; }

// Splits a large 1-D grid into (x, y) with x <= 65535.
inline void grid_2d(uint32_t groups, uint32_t* gx, uint32_t* gy) {
  *gx = groups < 65535u ? groups : 65535u;
  *gy = (groups + *gx - 1) / *gx;
}

}  // namespace ogx::vk::kernels
