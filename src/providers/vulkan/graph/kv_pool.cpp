#include "providers/vulkan/graph/kv_pool.h"

#include <algorithm>

#include "common/error.h"

namespace ogx::vk::graph {

namespace {
constexpr VkDeviceSize kChunkBytes = 64ull << 20;  // the pool grows by chunks of this much (or one block, when larger)
constexpr size_t kMaxBlocksPerChunk = 1024;         // block ids are chunk * blocks_per_chunk_ + index: a chunk never
                                                    // holds more than blocks_per_chunk_ blocks
}  // namespace

void KvPool::configure(const std::vector<int64_t>& kv_heads, int64_t head_size, DType dtype) {
  OGX_CHECK(dtype == DType::f32 || dtype == DType::f16, "the vulkan provider keeps float32/float16 KV caches, the "
            "model's past_key is ", dtype_name(dtype));
  OGX_CHECK(!kv_heads.empty() && head_size > 0, "KV cache: no attention layers to lay out");
  max_heads_ = *std::max_element(kv_heads.begin(), kv_heads.end());
  layer_elems_ = kKvBlock * head_size;
  block_bytes_ = (VkDeviceSize)(2 * kv_heads.size() * layer_elems_) * dtype_size(dtype);
  block_bytes_ = (block_bytes_ + 255) / 256 * 256;
  OGX_CHECK((uint64_t)(2 * kv_heads.size() * layer_elems_) < (1ull << 31), "KV cache block too large");
  blocks_per_chunk_ = (size_t)std::clamp<VkDeviceSize>(kChunkBytes / block_bytes_, 1, kMaxBlocksPerChunk);
}

void KvPool::grow(size_t at_least) {
  if (budget_ > 0) {  // all or none: the budget is checked before any chunk is added
    const VkDeviceSize held = (VkDeviceSize)total_blocks_ * block_bytes_;
    const size_t room = held >= budget_ ? 0 : (size_t)((budget_ - held) / block_bytes_);
    if (room < at_least - free_.size())
      throw_error("KV cache pool: ", at_least, " more blocks of ", block_bytes_, " bytes (", kKvBlock,
                  " positions of one head) exceed the budget of ", budget_ >> 20, " MiB (", budget_,
                  " bytes; ", blocks_held(), " blocks held by live generators); end generators, lower max_length "
                  "or raise the provider option kv_cache_budget_mb");
  }
  // Whole chunks of blocks_per_chunk_ blocks (the budget's last may be smaller), as many as the request needs: a
  // chunk of more blocks would give ids that name blocks of the next chunks (a prompt of the 1B past 2048 positions
  // took 4096 blocks at once and wrote its keys through addresses read past the chunk list).
  while (free_.size() < at_least) {
    size_t n = blocks_per_chunk_;
    const VkDeviceSize held = (VkDeviceSize)total_blocks_ * block_bytes_;
    if (budget_ > 0) n = std::min(n, (size_t)((budget_ - held) / block_bytes_));
    DeviceBuffer chunk;
    try {
      chunk = ctx_.memory().allocate("kv cache pool chunk", (VkDeviceSize)n * block_bytes_);
    } catch (const Error& e) {
      throw_error("KV cache pool: out of device memory growing from ", held >> 20, " MiB by ", n, " blocks (",
                  e.what(), "); end generators, lower max_length or set the provider option kv_cache_budget_mb");
    }
    const int32_t first = (int32_t)(chunks_.size() * blocks_per_chunk_);
    chunks_.push_back(std::move(chunk));
    // A chunk smaller than blocks_per_chunk_ (the budget's last) leaves ids unused: ids stay chunk * per + index.
    for (size_t i = n; i-- > 0;) free_.push_back(first + (int32_t)i);
    refs_.resize(chunks_.size() * blocks_per_chunk_, 0);
    total_blocks_ += n;
  }
}

std::vector<int32_t> KvPool::take(size_t n) {
  OGX_CHECK(configured(), "internal: KV cache pool used before its layout is known");
  if (free_.size() < n) grow(n);
  std::vector<int32_t> out(free_.end() - (std::ptrdiff_t)n, free_.end());
  free_.resize(free_.size() - n);
  for (int32_t b : out) refs_[(size_t)b] = 1;
  return out;
}

void KvPool::free_memory() {
  chunks_.clear();
  free_.clear();
  refs_.clear();
  total_blocks_ = 0;
}

void KvPool::give(const std::vector<int32_t>& blocks) {
  for (int32_t b : blocks) {
    if ((size_t)b >= refs_.size() || refs_[(size_t)b] == 0) continue;  // (ids of a pool whose memory went)
    if (--refs_[(size_t)b] == 0) free_.push_back(b);
  }
}

BufferSlice KvPool::slice(int32_t block) const {
  const DeviceBuffer& c = chunks_[(size_t)block / blocks_per_chunk_];
  return c.slice().sub((VkDeviceSize)((size_t)block % blocks_per_chunk_) * block_bytes_, block_bytes_);
}

VkDeviceAddress KvPool::address(int32_t block) const { return slice(block).address; }

VulkanKvState* KvPool::live(const KvState* s, uint64_t serial) const {
  for (VulkanKvState* v : live_)
    if (v == s && v->serial() == serial) return v;
  return nullptr;
}

VulkanKvState::~VulkanKvState() {
  for (auto& b : blocks_) pool_->give(b);
  pool_->detach(this);
}

size_t VulkanKvState::bytes() const {  // each block once, however many of its rows hold it
  std::vector<int32_t> all;
  for (auto& b : blocks_) all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  return (size_t)(std::unique(all.begin(), all.end()) - all.begin()) * (size_t)pool_->block_bytes();
}

void VulkanKvState::reserve(int64_t positions) {
  OGX_CHECK(positions <= max_length_, "sequence of ", positions, " tokens exceeds max_length ", max_length_);
  const size_t heads = (size_t)pool_->max_heads();
  if (blocks_.empty()) blocks_.resize((size_t)rows_ * heads);
  const size_t want = (size_t)((positions + kKvBlock - 1) / kKvBlock), have = blocks_per_row();
  if (want <= have) return;
  std::vector<int32_t> got = pool_->take((want - have) * blocks_.size());
  size_t k = 0;
  for (auto& b : blocks_)
    for (size_t i = have; i < want; i++) b.push_back(got[k++]);
}

void VulkanKvState::write_table(uint64_t* table, int64_t max_blocks) const {
  for (size_t r = 0; r < blocks_.size(); r++) {
    const auto& b = blocks_[r];
    OGX_CHECK(!b.empty(), "internal: a KV state without blocks in a run");
    uint64_t* row = table + r * max_blocks;
    // Blocks past the table's width (kept after a rewind) lie past this run's positions: not needed.
    const size_t n = std::min<size_t>(b.size(), (size_t)max_blocks);
    for (size_t i = 0; i < n; i++) row[i] = pool_->address(b[i]);
    std::fill(row + n, row + max_blocks, row[0]);
  }
}

std::vector<int32_t> VulkanKvState::reorder(const std::vector<int32_t>& src, int64_t final_positions,
                                            CommandRecorder& rec) {
  for (int32_t s : src) OGX_CHECK(s >= 0 && s < rows_, "KV cache reorder: source row ", s, " outside [0, ", rows_, ")");
  final_positions = std::clamp<int64_t>(final_positions, 0, length_);
  unwritten_slack_ = length_ - final_positions;
  if (blocks_.empty()) {  // nothing held yet
    rows_ = (int)src.size();
    return {};
  }
  const size_t heads = (size_t)pool_->max_heads();
  std::vector<std::vector<int32_t>> next(src.size() * heads);
  const size_t n = blocks_per_row();
  const size_t used = std::min<size_t>(n, (size_t)((length_ + kKvBlock - 1) / kKvBlock));  // blocks worth copying
  const size_t full = std::min<size_t>(used, (size_t)(final_positions / kKvBlock));         // blocks to share
  // A source row's blocks move to the first row that continues it; later ones share its final blocks and get copies
  // of the rest (fresh blocks past the positions held).
  size_t copies = 0;
  std::vector<char> taken((size_t)rows_, 0);
  for (int32_t s : src) copies += taken[(size_t)s]++ ? 1 : 0;
  std::vector<int32_t> fresh = pool_->take(copies * heads * (n - full));  // throws before anything changed
  size_t k = 0;
  std::fill(taken.begin(), taken.end(), 0);
  for (size_t r = 0; r < src.size(); r++) {
    const size_t s = (size_t)src[r];
    const bool copy = taken[s];
    taken[s] = 1;
    for (size_t h = 0; h < heads; h++) {
      const std::vector<int32_t>& from = blocks_[s * heads + h];
      if (!copy) {
        next[r * heads + h] = from;
        continue;
      }
      auto& dst = next[r * heads + h];
      for (size_t i = 0; i < n; i++) {
        if (i < full) {
          pool_->share(from[i]);
          dst.push_back(from[i]);
          continue;
        }
        dst.push_back(fresh[k++]);
        if (i < used) rec.copy(pool_->slice(from[i]), pool_->slice(dst.back()));
      }
    }
  }
  std::vector<int32_t> freed;  // rows no one continues
  for (size_t s = 0; s < (size_t)rows_; s++)
    if (!taken[s])
      for (size_t h = 0; h < heads; h++) freed.insert(freed.end(), blocks_[s * heads + h].begin(), blocks_[s * heads + h].end());
  blocks_ = std::move(next);
  rows_ = (int)src.size();
  return freed;
}

size_t VulkanKvState::first_writable_block() const {
  // Rows write again from length_ - unwritten_slack_ on (a row's trailing prompt pads: it writes after its own
  // positions).
  return (size_t)(std::max<int64_t>(0, length_ - unwritten_slack_) / kKvBlock);
}

size_t VulkanKvState::writable_shared() const {
  size_t n = 0;
  for (auto& b : blocks_)
    for (size_t i = first_writable_block(); i < b.size(); i++) n += pool_->shared(b[i]) ? 1 : 0;
  return n;
}

size_t VulkanKvState::unshare_writable(CommandRecorder& rec) {
  // From the first writable block on, every holder of a shared block but the last gets a copy.
  const size_t first = first_writable_block(), need = writable_shared();
  if (need == 0) return 0;
  std::vector<int32_t> fresh = pool_->take(need);  // (at most `need`: later holders may find the block their own)
  size_t k = 0;
  for (auto& b : blocks_)
    for (size_t i = first; i < b.size(); i++)
      if (pool_->shared(b[i])) {
        rec.copy(pool_->slice(b[i]), pool_->slice(fresh[k]));
        pool_->give({b[i]});  // one holder fewer (others still hold it: not freed)
        b[i] = fresh[k++];
      }
  pool_->give(std::vector<int32_t>(fresh.begin() + (std::ptrdiff_t)k, fresh.end()));
  return k;
}

}  // namespace ogx::vk::graph
