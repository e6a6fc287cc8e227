#include "providers/vulkan/kernels/matmul.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "common/mapped_file.h"
#include "providers/vulkan/kernels/kernel_util.h"
#include "providers/vulkan/kernels/matmul_coop.h"
#include "providers/vulkan/transfer.h"

namespace ogx::vk::kernels {

namespace {

struct MatvecPush {
  uint64_t x, w, scales, zp, bias, y;
  uint32_t M, N, K, block_size, nblocks, zp_stride, has_zp, has_bias;
  uint64_t skip = 0, norm_bias = 0, gamma = 0, residual = 0;  // NORM_PROLOGUE variants only
  float epsilon = 0.0f;
  uint32_t norm_flags = 0;  // 1 skip, 2 norm bias, 4 residual
};
constexpr uint32_t kMatvecPushBytes = 80;      // without the norm fields
constexpr uint32_t kMatvecNormPushBytes = 120;  // <= 128, the guaranteed push-constant size
static_assert(sizeof(MatvecPush) == kMatvecNormPushBytes);

struct MatmulPush {  // matmul.comp's Push
  uint64_t a, b, scales, zp, bias, c;
  uint32_t M, N, K, sbk, sbn, batch_stride_b, block_size, nblocks, zp_stride, has_zp, has_bias;
};

// Output tile of matmul.comp, 64 mi x 64 ni: the largest within the tuning row's matmul_tile (64 or 128) and the
// device's shared memory that still gives enough workgroups to keep the device busy (a GPU: about one per
// compute unit of a large one; a CPU driver: a few per core); mi / ni = 2 only where M / N exceed 64.
void matmul_tile(const Context& ctx, uint32_t M, uint32_t N, uint32_t batch, uint32_t* mi, uint32_t* ni) {
  uint32_t min_groups = ctx.info().type == DeviceType::cpu ? 8 : 128;
  bool big = ctx.tuning().matmul_tile >= 128 && ctx.info().max_shared_memory >= 16 * (128 + 128) * 4 + 256;
  const uint32_t options[4][2] = {{2, 2}, {1, 2}, {2, 1}, {1, 1}};
  for (const auto& o : options) {
    if ((o[0] == 2 || o[1] == 2) && !big) continue;
    if ((o[0] == 2 && M <= 64) || (o[1] == 2 && N <= 64)) continue;
    *mi = o[0], *ni = o[1];
    if ((uint64_t)div_up(M, 64 * o[0]) * div_up(N, 64 * o[1]) * batch >= min_groups) return;
  }
}

// Records matmul.comp for p (its B strides set), batch workgroup layers. 16-byte loads along K where A / B (sbk 1)
// are 16-byte aligned with K and the strides multiples of one vector (8 fp16, 4 fp32); int4 B always reads words.
void dispatch_matmul(CommandRecorder& rec, const std::string& shader, const MatmulPush& p, bool int4, DType dt,
                     uint32_t batch, const std::vector<BufferSlice>& reads, const BufferSlice& out) {
  uint32_t vw = dt == DType::f16 ? 8 : 4, mi = 1, ni = 1;
  bool a_vec = p.K % vw == 0 && p.a % 16 == 0;
  bool b_vec = !int4 && p.sbk == 1 && p.K % vw == 0 && p.sbn % vw == 0 && p.batch_stride_b % vw == 0 && p.b % 16 == 0;
  matmul_tile(rec.context(), p.M, p.N, batch, &mi, &ni);
  const Pipeline& pl = rec.context().pipelines().get(shader, {mi, ni, a_vec ? 1u : 0u, b_vec ? 1u : 0u});
  rec.dispatch(pl, &p, sizeof(p), div_up(p.N, 64 * ni), div_up(p.M, 64 * mi), batch, reads, {out});
}

constexpr size_t kTransposeBytes = 4u << 20;           // host buffer of the fallback transposition
constexpr VkDeviceSize kTransposeScratchBytes = 32u << 20;  // device block of the weight transposition

int64_t rows_of(const TensorView& t) { return t.numel() / t.shape.back(); }

// `pad` extra bytes past the end keep word reads of the last bytes inside the buffer.
DeviceBuffer upload_plain(Context& ctx, const std::string& name, const Tensor& t, VkDeviceSize pad = 0) {
  DeviceBuffer buf = ctx.memory().allocate(name, t.bytes() + pad);
  ctx.transfers().upload(buf.slice(), 0, t.raw(), t.bytes());
  MappedFile::release_if_mapped(t.raw(), t.bytes());  // the device holds it now (a later host read re-faults it)
  return buf;
}

// Units of 8 values of K a matvec thread loads per iteration (matvec.comp UNROLL): as many as it has (1, 2 or 4),
// within a register budget — fp weights hold 16 bytes per row and unit (8 rows: 1, 4 rows: 2; measured on the
// H200, 8 rows x 2 units was 3% slower for the 1B fp16 decode), int4 4 bytes (always up to 4: +15% for the 1B
// int4 decode, the down projection's K = 8192 in one round trip instead of four).
uint32_t matvec_unroll(int64_t K, uint32_t threads, uint32_t rows, bool int4) {
  int64_t per_thread = ((K + 7) / 8 + threads - 1) / threads;
  uint32_t cap = int4 || rows <= 2 ? 4 : (rows <= 4 ? 2 : 1);
  uint32_t u = per_thread >= 4 ? 4 : (per_thread >= 2 ? 2 : 1);
  return u < cap ? u : cap;
}

// Outputs per workgroup of matvec_q4_wide.comp for this weight (0: it does not apply): int4 with blocks of at
// least 32 values (a 16-byte load stays in one block), K % 32 == 0, K and N at least the row's q4_wide_min_dim; an
// even count for gate/up pairs.
// Outputs per workgroup of matvec_q4_wide.comp from a tuning value (1..8): even for (gate, up) pairs.
uint32_t q4_wide_outputs(uint32_t wanted, bool silu_pairs) {
  uint32_t rows = std::min<uint32_t>(wanted, 8);
  if (silu_pairs && rows % 2 != 0) rows = rows == 1 ? 2 : rows - 1;
  return rows;
}

uint32_t q4_wide_rows(const Tuning& tu, const MatMulWeight& w, bool silu_pairs) {
  if (!w.int4 || tu.q4_wide_rows == 0 || w.block_size < 32 || w.K % 32 != 0 || std::min(w.K, w.N) < tu.q4_wide_min_dim)
    return 0;
  return q4_wide_outputs(tu.q4_wide_rows, silu_pairs);
}

// Units of K a skinny thread loads per iteration (matvec_skinny.comp UNROLL): as many as it has (1, 2 or 4) up to
// the tuning row's skinny_unroll, where the decoded weights (unroll x rows x 8 floats) and the accumulators (rows x
// M) stay within 96 registers' worth of floats.
uint32_t skinny_unroll(int64_t K, uint32_t threads, uint32_t rows, int64_t M, uint32_t cap) {
  int64_t per_thread = ((K + 7) / 8 + threads - 1) / threads;
  uint32_t u = 1;
  while (u * 2 <= std::min<uint32_t>(cap, 4) && per_thread >= u * 2 && (u * 2) * rows * 8 + rows * M <= 96) u *= 2;
  return u;
}

// Activation rows a skinny workgroup is compiled for (matvec_skinny.comp MROWS): M rounded up to 2, 3, 4, 6, 8, 12
// or 16, so at most seven pipelines per variant serve every batch size and short prompt (each new M would compile
// new pipelines — a first-use pause per prompt length) at most a third more arithmetic; the extra rows repeat row
// M - 1 and are not written.
uint32_t skinny_rows_compiled(int64_t M) {
  for (uint32_t b : {2u, 3u, 4u, 6u, 8u, 12u, 16u})
    if (M <= b) return b;
  return (uint32_t)M;
}

// Host fallback of the device transposition (a weight of 2^32 elements or more): groups of output rows of the part
// are transposed in a bounded host buffer (reading source rows contiguously), then streamed row by row.
void transpose_on_host(Context& ctx, const MatMulWeight& w, const WeightColumns& part) {
  int64_t K = w.K, N = part.w->dim(1);
  size_t es = dtype_size(w.dtype);
  const char* src = static_cast<const char*>(part.w->raw());
  int64_t R = std::clamp<int64_t>((int64_t)(kTransposeBytes / (K * es)), 1, N);
  std::vector<char> tile((size_t)(R * K) * es);
  for (int64_t r0 = 0; r0 < N; r0 += R) {
    int64_t rows = std::min(R, N - r0);
    for (int64_t k = 0; k < K; k++) {
      const char* s = src + ((size_t)k * N + r0) * es;
      for (int64_t r = 0; r < rows; r++) std::memcpy(&tile[((size_t)r * K + k) * es], s + r * es, es);
    }
    if (part.stride == 1) {  // the rows are consecutive in the destination: one upload
      ctx.transfers().upload(w.data.slice(), (VkDeviceSize)((r0 + part.offset) * K) * es, tile.data(),
                             (VkDeviceSize)(rows * K) * es);
      continue;
    }
    for (int64_t r = 0; r < rows; r++)
      ctx.transfers().upload(w.data.slice(), (VkDeviceSize)(((r0 + r) * part.stride + part.offset) * K) * es,
                             &tile[(size_t)(r * K) * es], (VkDeviceSize)K * es);
  }
}

struct TransposePush {  // transpose.comp's Push
  uint64_t in, out;
  uint32_t kc, N, K, k0, row_stride, row_offset;
};

}  // namespace

MatMulWeight upload_matmul_weight(Context& ctx, const std::string& name, const Tensor& b) {
  OGX_CHECK(b.rank() == 2, "MatMul weight ", name, " must be 2-D [K, N], got ", shape_str(b.shape()));
  return upload_matmul_weight_parts(ctx, name, {{&b, 0, 1}}, b.dim(1));
}

// Each part's bytes stream to the device as stored ([K, N_i], contiguous copies only) in blocks of whole rows, and
// transpose.comp lays each block out as columns of [N, K] (its rows offset + c * stride). Two scratch blocks
// alternate, so the host fills one while the device transposes the other. Fused weights (packed QKV, interleaved
// gate/up) are placed from their parts, never built on the host. (A host transposition and the host-built fused
// weights were most of a folder's load time: ~55% of the CPU time of loading a 1B fp16 folder, measured with perf.)
MatMulWeight upload_matmul_weight_parts(Context& ctx, const std::string& name, const std::vector<WeightColumns>& parts,
                                        int64_t N) {
  OGX_CHECK(!parts.empty(), "MatMul weight ", name, ": no parts");
  const Tensor& first = *parts[0].w;
  OGX_CHECK(first.rank() == 2, "MatMul weight ", name, " must be 2-D [K, N], got ", shape_str(first.shape()));
  MatMulWeight w;
  w.dtype = first.dtype();
  storage_suffix(w.dtype, name.c_str());
  w.K = first.dim(0);
  w.N = N;
  size_t es = dtype_size(w.dtype);
  int64_t covered = 0;
  for (const WeightColumns& p : parts) {
    OGX_CHECK(p.w->rank() == 2 && p.w->dim(0) == w.K && p.w->dtype() == w.dtype && p.stride >= 1 && p.offset >= 0 &&
                  (p.w->dim(1) == 0 || p.offset + (p.w->dim(1) - 1) * p.stride < N),
              "MatMul weight ", name, ": a part ", shape_str(p.w->shape()), " does not fit [", w.K, ", ", N, "]");
    covered += p.w->dim(1);
  }
  OGX_CHECK(covered == N, "MatMul weight ", name, ": parts cover ", covered, " of ", N, " columns");
  w.data = ctx.memory().allocate(name, (VkDeviceSize)(w.K * N) * es);
  const int64_t K = w.K;
  if (K == 0 || N == 0) return w;
  if ((uint64_t)K * (uint64_t)N >= (1ull << 32)) {  // the kernel indexes elements with 32 bits
    for (const WeightColumns& p : parts) transpose_on_host(ctx, w, p);
    return w;
  }
  const Pipeline& pl = ctx.pipelines().get(es == 2 ? "transpose_f16" : "transpose_f32");
  int64_t widest = 0;
  for (const WeightColumns& p : parts) widest = std::max(widest, p.w->dim(1));
  const int64_t kc_max = std::clamp<int64_t>((int64_t)(kTransposeScratchBytes / ((VkDeviceSize)widest * es)), 1, K);
  DeviceBuffer scratch[2];
  std::unique_ptr<CommandRecorder> rec[2];
  int blocks = (int)parts.size() * (int)((K + kc_max - 1) / kc_max);
  for (int i = 0; i < 2 && i < blocks; i++) {
    scratch[i] = ctx.memory().allocate(name + " (upload block)", (VkDeviceSize)(kc_max * widest) * es);
    rec[i] = std::make_unique<CommandRecorder>(ctx);
  }
  int i = 0;
  for (const WeightColumns& part : parts) {
    const int64_t Ni = part.w->dim(1);
    if (Ni == 0) continue;
    const VkDeviceSize row_bytes = (VkDeviceSize)Ni * es;
    const char* src = static_cast<const char*>(part.w->raw());
    for (int64_t k0 = 0; k0 < K; k0 += kc_max, i ^= 1) {
      int64_t rows = std::min(kc_max, K - k0);
      rec[i]->wait();  // its last transposition read scratch[i]
      ctx.transfers().upload(scratch[i].slice(), 0, src + (size_t)k0 * row_bytes, (VkDeviceSize)rows * row_bytes);
      // The block is in the upload heap: its pages of a mapped model file need not stay resident (host RSS of a
      // loaded model stays small; a later host read faults them back in).
      MappedFile::release_if_mapped(src + (size_t)k0 * row_bytes, (size_t)rows * row_bytes);
      TransposePush p{scratch[i].slice().address, w.data.slice().address, (uint32_t)rows, (uint32_t)Ni, (uint32_t)K,
                      (uint32_t)k0, (uint32_t)part.stride, (uint32_t)part.offset};
      rec[i]->begin();  // opens with a barrier after the block's upload copies
      rec[i]->dispatch(pl, &p, sizeof(p), div_up(Ni, 32), div_up(rows, 32), 1, {scratch[i].slice()},
                       {w.data.slice()});
      rec[i]->end();
      rec[i]->submit();
    }
  }
  for (auto& r : rec)
    if (r) r->wait();
  return w;
}

MatMulWeight upload_matmul_nbits(Context& ctx, const std::string& name, const Tensor& b, const Tensor& scales,
                                 const Tensor* zero_points, int64_t K, int64_t N, int64_t block_size,
                                 const std::function<TensorView(int)>& uploaded) {
  OGX_CHECK(block_size >= 16 && (block_size & (block_size - 1)) == 0, "MatMulNBits ", name,
            ": block_size must be a power of two >= 16, got ", block_size);
  int64_t nblocks = (K + block_size - 1) / block_size;
  OGX_CHECK(b.dtype() == DType::u8 && b.numel() == N * nblocks * block_size / 2, "MatMulNBits ", name,
            ": B must be uint8 [N, K/block, block/2] = ", N * nblocks * block_size / 2, " bytes, got ",
            dtype_name(b.dtype()), shape_str(b.shape()));
  OGX_CHECK(scales.numel() == N * nblocks, "MatMulNBits ", name, ": scales must have N*K/block = ", N * nblocks,
            " elements, got ", scales.numel());
  storage_suffix(scales.dtype(), name.c_str());
  MatMulWeight w;
  w.dtype = scales.dtype();
  w.int4 = true;
  w.K = K;
  w.N = N;
  w.block_size = block_size;
  w.nblocks = nblocks;
  if (zero_points)
    OGX_CHECK(zero_points->dtype() == DType::u8 && zero_points->numel() == N * ((nblocks + 1) / 2), "MatMulNBits ",
              name, ": zero_points must be uint8 [N * ceil(K/block / 2)], got ", dtype_name(zero_points->dtype()),
              shape_str(zero_points->shape()));
  // Views of uploads the caller shares (their allocations are 256-byte aligned, so the scales' dummy zero-point
  // reads stay inside them), else the weight's own.
  auto view_of = [&](int i) { TensorView v = uploaded(i); return DeviceBuffer(nullptr, -1, v.mem, name); };
  w.data = uploaded ? view_of(0) : upload_plain(ctx, name, b);
  w.scales = uploaded ? view_of(1) : upload_plain(ctx, name + ".scales", scales, 16);  // also read as dummy zero
                                                                                       // points (matvec_fused)
  if (zero_points) {
    w.zero_points = uploaded ? view_of(2) : upload_plain(ctx, name + ".zero_points", *zero_points);
    w.has_zero_points = true;
  }
  return w;
}

std::vector<BufferSlice> projection_reads(const TensorView& a, const MatMulWeight& w, const TensorView* bias) {
  std::vector<BufferSlice> reads{a.mem, w.data.slice()};
  if (w.int4) reads.push_back(w.scales.slice());
  if (w.has_zero_points) reads.push_back(w.zero_points.slice());
  if (bias) reads.push_back(bias->mem);
  return reads;
}

void matmul(CommandRecorder& rec, const TensorView& a, const MatMulWeight& w, const TensorView* bias,
            const TensorView& c) {
  OGX_CHECK(a.dtype == w.dtype && c.dtype == w.dtype, "MatMul: activation ", dtype_name(a.dtype),
            " / output ", dtype_name(c.dtype), " do not match the weight's ", dtype_name(w.dtype));
  OGX_CHECK(a.shape.back() == w.K && c.shape.back() == w.N && rows_of(a) == rows_of(c), "MatMul: shapes ",
            shape_str(a.shape), " x [", w.K, ",", w.N, "] -> ", shape_str(c.shape), " do not agree");
  Context& ctx = rec.context();
  const char* t = storage_suffix(a.dtype, "MatMul");
  uint32_t M = (uint32_t)rows_of(a), N = (uint32_t)w.N, K = (uint32_t)w.K;
  uint32_t zp_stride = (uint32_t)((w.nblocks + 1) / 2);
  if (M > decode_rows_max(ctx) && matvec_coop_applies(ctx, a, w, M)) {  // up to 64 rows on the matrix units
    matvec_coop(rec, a, w, bias, false, c);
    return;
  }
  if (M <= decode_rows_max(ctx)) {
    matvec_fused(rec, a, w, bias, nullptr, false, c);
    return;
  }
  if (matmul_coop_applies(ctx, a, w)) {
    matmul_coop(rec, a, w, bias, c);
    return;
  }
  std::string shader = std::string(w.int4 ? "matmul_q4_" : "matmul_") + t;
  MatmulPush p{addr(a), w.data.slice().address, w.int4 ? w.scales.slice().address : 0,
               w.has_zero_points ? w.zero_points.slice().address : 0, addr_or_zero(bias), addr(c),
               M, N, K, 1, K, 0, (uint32_t)w.block_size, (uint32_t)w.nblocks, zp_stride, w.has_zero_points,
               bias != nullptr};
  dispatch_matmul(rec, shader, p, w.int4, a.dtype, 1, projection_reads(a, w, bias), c.mem);
}

namespace {
bool uses_skinny(const Tuning& tu, int64_t M);
}  // namespace

void matvec_fused(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView* bias,
                  const NormPrologue* norm, bool silu_pairs, const TensorView& y) {
  const char* what = silu_pairs ? "gate/up SiLU matvec" : "matvec";
  OGX_CHECK(x.dtype == w.dtype && y.dtype == w.dtype, what, ": activation ", dtype_name(x.dtype), " / output ",
            dtype_name(y.dtype), " do not match the weight's ", dtype_name(w.dtype));
  int64_t M = rows_of(x);
  int64_t N_out = silu_pairs ? w.N / 2 : w.N;
  OGX_CHECK(x.shape.back() == w.K && M >= 1 && M <= decode_rows_max(rec.context()) && (!silu_pairs || w.N % 2 == 0) &&
                y.numel() == M * N_out,
            what, ": shapes ", shape_str(x.shape), " -> ", shape_str(y.shape), " do not fit [", w.K, ", ", w.N, "]");
  Context& ctx = rec.context();
  const Tuning& tu = ctx.tuning();
  bool aligned = x.mem.address % 16 == 0;
  std::vector<BufferSlice> reads = projection_reads(x, w, bias);
  std::vector<BufferSlice> writes{y.mem};
  // int4 without zero points: the kernel reads a (discarded) zero-point byte anyway, from the scales, which are
  // larger than N * zp_stride bytes.
  uint64_t zp_addr = w.has_zero_points ? w.zero_points.slice().address : (w.int4 ? w.scales.slice().address : 0);
  MatvecPush p{addr(x), w.data.slice().address, w.int4 ? w.scales.slice().address : 0, zp_addr, addr_or_zero(bias), addr(y), (uint32_t)M,
               (uint32_t)w.N, (uint32_t)w.K, (uint32_t)w.block_size, (uint32_t)w.nblocks,
               (uint32_t)((w.nblocks + 1) / 2), w.has_zero_points, bias != nullptr};
  if (norm) {
    OGX_CHECK(norm->gamma && norm->gamma->numel() == w.K && norm->gamma->dtype == x.dtype, what,
              ": the folded norm's gamma must have K = ", w.K, " elements of the activation dtype");
    for (const TensorView* t : {norm->skip, norm->residual})
      if (t) OGX_CHECK(t->numel() == x.numel() && t->dtype == x.dtype, what, ": the folded norm's skip / residual ",
                       shape_str(t->shape), " must match the input ", shape_str(x.shape));
    if (norm->bias) OGX_CHECK(norm->bias->numel() == w.K && norm->bias->dtype == x.dtype, what,
                              ": the folded norm's bias must have K = ", w.K, " elements");
    for (const TensorView* t : {norm->skip, norm->bias, norm->gamma}) {
      if (!t) continue;
      aligned = aligned && t->mem.address % 16 == 0;
      reads.push_back(t->mem);
    }
    if (norm->residual) writes.push_back(norm->residual->mem);
    p.skip = addr_or_zero(norm->skip);
    p.norm_bias = addr_or_zero(norm->bias);
    p.gamma = addr(*norm->gamma);
    p.residual = addr_or_zero(norm->residual);
    p.epsilon = norm->epsilon;
    p.norm_flags = (norm->skip ? 1u : 0u) | (norm->bias ? 2u : 0u) | (norm->residual ? 4u : 0u);
  }
  uint32_t wide = (w.K % 8 == 0 && aligned) ? 1 : 0;  // int4 rows are word-aligned anyway
  uint32_t threads = w.int4 ? tu.matvec_threads_q4 : tu.matvec_threads;
  const char* kind = w.int4 ? "_q4_" : "_";
  const char* variant = silu_pairs ? (norm ? "_silu_norm" : "_silu") : (norm ? "_norm" : "");
  uint32_t push_bytes = norm ? kMatvecNormPushBytes : kMatvecPushBytes;
  // matvec_q4_wide.comp: 16-byte nibble loads; one activation row per workgroup, or (without the norm prologue) up to
  // q4_wide_max_m rows with the weights loaded once.
  const uint32_t q4_rows = q4_wide_rows(tu, w, silu_pairs);
  const bool q4_wide = q4_rows && wide && w.data.slice().address % 16 == 0;
  auto q4_wide_dispatch = [&](uint32_t mrows) {
    // Several activation rows: outputs per workgroup from q4_wide_rows_batch where set (each workgroup reads all of
    // its rows' activations: more outputs per workgroup, fewer activation reads).
    const uint32_t group_rows =
        mrows > 1 && tu.q4_wide_rows_batch > 0 ? q4_wide_outputs(tu.q4_wide_rows_batch, silu_pairs) : q4_rows;
    // One row: q4_wide_groups groups of those outputs per workgroup (at most 16 outputs).
    uint32_t groups = mrows > 1 ? 1 : std::clamp<uint32_t>(tu.q4_wide_groups, 1, 4);
    while (groups > 1 && group_rows * groups > 16) groups--;
    const uint32_t rows = group_rows * groups;
    // The fewest threads (from one subgroup up to the row's int4 threads) that hold all of K in one round of
    // unroll chunks each: one memory round trip per dispatch.
    int64_t chunks = w.K / 32;
    uint32_t unroll = std::clamp<uint32_t>(tu.q4_wide_unroll, 1, 4) == 4 ? 4 : (tu.q4_wide_unroll >= 2 ? 2 : 1);
    uint32_t t = std::max<uint32_t>(ctx.info().subgroup_size, 1);
    while (t * 2 <= threads && (int64_t)t * unroll < chunks) t *= 2;
    while (unroll > 1 && (int64_t)t * (unroll / 2) >= chunks) unroll /= 2;
    // Several activation rows: at most 16 subgroups (the shader's shared partial sums), whatever size they run at.
    const uint32_t min_sg = std::max<uint32_t>(1, std::min(ctx.info().min_subgroup_size, ctx.info().subgroup_size));
    while (mrows > 1 && t > 16 * min_sg) t /= 2;
    const bool half = tu.q4_wide_half && x.dtype == DType::f16 && ctx.info().features.fp16_arithmetic;
    std::string shader = std::string(half ? "matvec_q4_wide_h2_" : "matvec_q4_wide_") +
                         storage_suffix(x.dtype, "MatMul") + variant;
    const uint32_t acc_words = tu.q4_wide_half_acc >= 4 ? 4 : (tu.q4_wide_half_acc >= 2 ? 2 : 1);
    const Pipeline& pl = ctx.pipelines().get(
        shader, {t, rows, unroll, w.has_zero_points ? 1u : 0u, mrows, acc_words, group_rows});
    uint32_t gx, gz;
    grid_2d(div_up((uint64_t)w.N, rows), &gx, &gz);
    rec.dispatch(pl, &p, push_bytes, gx, (uint32_t)div_up((uint64_t)M, mrows), gz, reads, writes);
  };
  if (q4_wide && !norm && M >= 2 && M <= std::min<uint32_t>(tu.q4_wide_max_m, 16)) {
    // Up to 8 rows per workgroup; more rows in balanced groups (9..16: two of <= 8, their weight reads the second
    // time mostly from the cache).
    const uint32_t groups = (uint32_t)div_up((uint64_t)M, 8);
    q4_wide_dispatch((uint32_t)div_up((uint64_t)M, groups));
    return;
  }
  if (uses_skinny(tu, M) && !norm && matvec_coop_applies(ctx, x, w, M)) {  // matvec_coop.comp: the matrix units
    matvec_coop(rec, x, w, bias, silu_pairs, y);
    return;
  }
  if (uses_skinny(tu, M)) {  // matvec_skinny.comp: all M rows in each workgroup of skinny_rows outputs
    uint32_t rows = std::clamp<uint32_t>(tu.skinny_rows, 1, 8);
    OGX_CHECK(!silu_pairs || rows % 2 == 0, what, " needs an even skinny_rows, tuning has ", rows);
    uint32_t min_sg = std::max<uint32_t>(1, std::min(ctx.info().min_subgroup_size, ctx.info().subgroup_size));
    // No more threads than units of K (small K: idle threads would only add to the reduction), at least a subgroup.
    uint32_t sg = std::max<uint32_t>(ctx.info().max_subgroup_size, ctx.info().subgroup_size);
    while (threads / 2 >= std::max<uint32_t>(sg, 1) && (int64_t)(threads / 2) >= (w.K + 7) / 8) threads /= 2;
    uint32_t nsg = std::max<uint32_t>(1, div_up(threads, min_sg));
    uint32_t mrows = skinny_rows_compiled(M);
    uint32_t unroll = skinny_unroll(w.K, threads, rows, mrows, tu.skinny_unroll);
    std::string shader = std::string("matvec_skinny") + kind + storage_suffix(x.dtype, "MatMul") + variant;
    const Pipeline& pl = ctx.pipelines().get(shader, {threads, rows, wide, mrows, nsg, unroll});
    uint32_t gx, gz;
    grid_2d(div_up(w.N, rows), &gx, &gz);
    rec.dispatch(pl, &p, push_bytes, gx, 1, gz, reads, writes);
    return;
  }
  if (q4_wide) {
    q4_wide_dispatch(1);
    return;
  }
  OGX_CHECK(!silu_pairs || tu.matvec_rows % 2 == 0, what, " needs an even matvec_rows, tuning has ", tu.matvec_rows);
  uint32_t unroll = matvec_unroll(w.K, threads, tu.matvec_rows, w.int4);
  std::string shader = std::string("matvec") + kind + storage_suffix(x.dtype, "MatMul") + variant;
  const Pipeline& pl = ctx.pipelines().get(shader, {threads, tu.matvec_rows, wide, unroll});
  uint32_t gx, gz;
  grid_2d(div_up(w.N, tu.matvec_rows), &gx, &gz);
  rec.dispatch(pl, &p, push_bytes, gx, (uint32_t)M, gz, reads, writes);
}

int64_t decode_rows_max(const Context& ctx) {
  return std::max<int64_t>(2, std::min<uint32_t>(ctx.tuning().skinny_max_m, 16));
}

namespace {
bool uses_skinny(const Tuning& tu, int64_t M) { return M >= 2 && M <= tu.skinny_max_m; }
}  // namespace

bool matvec_fused_applies(const Context& ctx, int64_t M, bool silu_pairs) {
  const Tuning& tu = ctx.tuning();
  uint32_t rows = uses_skinny(tu, M) ? std::clamp<uint32_t>(tu.skinny_rows, 1, 8) : tu.matvec_rows;
  return M >= 1 && M <= decode_rows_max(ctx) && (!silu_pairs || rows % 2 == 0);
}

void matvec_gate_up_silu(CommandRecorder& rec, const TensorView& x, const MatMulWeight& w, const TensorView& y) {
  const int64_t M = rows_of(x);
  if (M > decode_rows_max(rec.context()) && matvec_coop_applies(rec.context(), x, w, M))
    return matvec_coop(rec, x, w, nullptr, true, y);
  matvec_fused(rec, x, w, nullptr, nullptr, true, y);
}

void quantize_int8_blocks(CommandRecorder& rec, const TensorView& x, int64_t block_size, const TensorView& y) {
  OGX_CHECK(x.dtype == DType::f32 && y.dtype == DType::f32 && x.numel() == y.numel() && !x.shape.empty(),
            "quantize_int8_blocks: x and y must be float32 tensors of the same size");
  OGX_CHECK(block_size > 0, "quantize_int8_blocks: block_size must be positive");
  int64_t K = x.shape.back(), M = rows_of(x);
  struct {
    uint64_t x, y;
    uint32_t M, K, block_size;
  } p{addr(x), addr(y), (uint32_t)M, (uint32_t)K, (uint32_t)block_size};
  OGX_CHECK(M <= 65535, "quantize_int8_blocks: more than 65535 rows");
  const Pipeline& pl = rec.context().pipelines().get("quantize_int8");
  rec.dispatch(pl, &p, sizeof(p), div_up(K, block_size), (uint32_t)M, 1, {x.mem}, {y.mem});
}

void matmul_batched(CommandRecorder& rec, const TensorView& a, const TensorView& b, const TensorView& c) {
  check_same_dtype(a, b, "MatMul");
  check_same_dtype(a, c, "MatMul");
  OGX_CHECK(a.shape.size() >= 2 && b.shape.size() >= 2, "MatMul: inputs must be at least 2-D");
  int64_t K = a.shape.back(), M = a.shape[a.shape.size() - 2], N = b.shape.back();
  OGX_CHECK(b.shape[b.shape.size() - 2] == K, "MatMul: inner dimensions differ: ", shape_str(a.shape), " x ",
            shape_str(b.shape));
  if (M == 0 || N == 0 || K == 0) {  // empty operands (a zero-rank LoRA input): an empty or an all-zero product
    if (c.numel() > 0) rec.fill_zero(c.mem);
    return;
  }
  int64_t batch = a.numel() / (M * K), batch_b = b.numel() / (K * N);
  OGX_CHECK(batch_b == 1 || batch_b == batch, "MatMul: batch of B (", batch_b, ") must be 1 or ", batch);
  OGX_CHECK(c.numel() == batch * M * N, "MatMul: output ", shape_str(c.shape), " has the wrong size");
  MatmulPush p{addr(a), addr(b), 0, 0, 0, addr(c), (uint32_t)M, (uint32_t)N, (uint32_t)K, (uint32_t)N, 1,
               batch_b == 1 ? 0u : (uint32_t)(K * N), 0, 0, 0, 0, 0};
  dispatch_matmul(rec, std::string("matmul_") + storage_suffix(a.dtype, "MatMul"), p, false, a.dtype,
                  (uint32_t)batch, {a.mem, b.mem}, c.mem);
}

}  // namespace ogx::vk::kernels
