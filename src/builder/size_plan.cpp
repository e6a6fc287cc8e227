#include "builder/size_plan.h"

#include <filesystem>

#include "common/checked.h"
#include "common/error.h"

namespace fs = std::filesystem;

namespace ogx::builder {

SizePlan plan_sizes(const HfConfig& c, Precision precision) {
  OGX_CHECK(c.layers <= kMaxLayers, "config.json: num_hidden_layers ", c.layers, " is more than ", kMaxLayers,
            " (an ONNX graph of that many layers cannot exist)");
  const std::string w = "config.json: model size";
  auto mul = [&](int64_t a, int64_t b) { return mul_checked(a, b, w); };
  auto add = [&](int64_t a, int64_t b) { return add_checked(a, b, w); };
  const int64_t q = mul(c.heads, c.head_dim), kv = mul(c.kv_heads, c.head_dim);
  int64_t layer = add(mul(c.hidden, add(q, kv)), mul(c.hidden, kv));  // q, k, v projections
  layer = add(layer, mul(q, c.hidden));                                 // o projection
  layer = add(layer, mul(3, mul(c.hidden, c.intermediate)));            // gate, up, down
  layer = add(layer, add(add(q, mul(2, kv)), add(mul(4, c.hidden), mul(2, c.head_dim))));  // biases, norms
  const int64_t embed = mul(c.vocab, c.hidden);
  int64_t params = add(mul(layer, c.layers), add(embed, c.hidden));
  if (!c.tie_embeddings) params = add(params, embed);
  SizePlan p;
  p.params = (uint64_t)params;
  p.weight_bytes = precision == Precision::fp32   ? mul_checked((uint64_t)params, 4, w)
                   : precision == Precision::fp16 ? mul_checked((uint64_t)params, 2, w)
                                                  : (uint64_t)params / 2;
  return p;
}

void check_fits(uint64_t bytes, uint64_t params, uint64_t limit, const std::string& what, const std::string& where) {
  if (limit == 0 || bytes <= limit) return;
  throw_error(what, " needs ", bytes, " bytes (", params, " parameters), more than the ", limit, " bytes of ", where,
              ": check the config's sizes");
}

uint64_t free_disk_bytes(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) return 0;
  auto space = fs::space(p, ec);
  return ec ? 0 : (uint64_t)space.available;
}

}  // namespace ogx::builder
