// The one provider interface: a provider turns a loaded model into a Session that runs it.
// Tensors crossing this boundary are host tensors; a provider keeps device state (weights, KV, recorded command
// buffers) inside its session.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnx/loader.h"

namespace ogx {

using NamedTensor = std::pair<std::string, Tensor>;
using OptionList = std::vector<std::pair<std::string, std::string>>;

struct SessionOptions {
  int intra_op_num_threads = 0;  // 0: all cores
  std::string provider = "cpu";  // canonical provider name: "cpu" or "vulkan"
  OptionList provider_options;   // provider-specific key/values (device_id, performance_preference, ...)
  OptionList device_filtering;   // hardware_device_type, hardware_device_id, hardware_vendor_id
  // An output [B, S, ...] of which the caller needs only the last position (the decoder's logits): a provider may
  // compute and return just [B, 1, ...]. Empty: every output in full.
  std::string last_position_output;
};

// How a provider may pick the next token on its device (so only token ids come back each step).
struct DeviceSampling {
  bool greedy = true;        // argmax (lowest index on ties); else top-k / top-p / temperature
  int top_k = 0;             // 0: off
  float top_p = 1.0f;
  float temperature = 1.0f;
  uint64_t seed = 0;         // of the device's random state
  bool token_mask = false;   // only tokens of a packed bit mask may be picked (set_token_mask before each run)
};

class Session {
 public:
  virtual ~Session() = default;
  // inputs: every graph input by name. outputs: the requested outputs; an entry holding a tensor is a pre-bound
  // buffer the session writes into (e.g. a KV cache shared between past and present), an empty entry is filled in.
  virtual void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) = 0;
  virtual const Graph& graph() const = 0;
  virtual std::string provider_name() const = 0;
  // True when the session keeps the decoder's KV cache in its own (device) memory: the caller binds no past/present
  // tensors, and each run's past length is total_sequence_length - sequence_length, so rewinding is implicit.
  virtual bool owns_kv_cache() const { return false; }
  // A session-owned KV cache's rows (the batch dimension) after the last run: row i becomes a copy of row
  // source_rows[i]; source_rows.size() is the new row count (beam search reorders its beams each step and expands a
  // prompt's row to its beams). Done on the device, no host round trip. False: unsupported.
  virtual bool reorder_kv_rows(const std::vector<int32_t>& source_rows) { return false; }
  // Providers that can: later runs also pick the next token from the last position of
  // SessionOptions::last_position_output on the device (read them with sampled_tokens()), and a run whose outputs do
  // not ask for that output leaves it on the device (read_last_output fetches it on demand). False: unsupported.
  virtual bool enable_device_sampling(const DeviceSampling&) { return false; }
  // With DeviceSampling::token_mask: the tokens the next run's device sampling may pick, a packed bit mask per row
  // (bits: [rows x words_per_row], bit t of word t / 32 of its row; words_per_row = ceil(vocab / 32)), uploaded as
  // is (rows x words_per_row x 4 bytes per step, no logits read back). False: unsupported.
  virtual bool set_token_mask(const std::vector<uint32_t>& bits, int64_t words_per_row) { return false; }
  // The tokens the last run picked on the device, one per row [B]; empty when it picked none.
  virtual std::vector<int64_t> sampled_tokens() const { return {}; }
  // The last run's last-position output [B, 1, ...] (after a run that did not return it); false when unavailable.
  virtual bool read_last_output(Tensor* out) { return false; }
  // Queued decode steps, for sessions that pick greedy tokens on the device: queue_next submits a step without
  // waiting for it — `inputs` as for run() with no outputs, except that the values of `token_input` ([B, 1]) are
  // the tokens the step before it picks on the device, so a step can be queued while the one before it still runs
  // and the device never waits for the host. At most two steps are queued; false: nothing was queued (unsupported
  // or not possible now: run synchronously). finish_queued() waits for the oldest and makes it the last run
  // (sampled_tokens()); false when none is queued (another caller's run dropped them). drop_queued() waits for all
  // and forgets them (their KV cache writes lie past the caller's sequence: a later run at those positions
  // overwrites them). run() drops queued steps first.
  virtual bool queue_next(const std::vector<NamedTensor>& inputs, const std::string& token_input) { return false; }
  virtual bool finish_queued() { return false; }
  virtual void drop_queued() {}
  // Counters of the last run for benchmarks (e.g. dispatches, barriers, submits, recordings); empty when none.
  virtual std::vector<std::pair<std::string, double>> stats() const { return {}; }
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<Session> create_session(std::shared_ptr<const Model> model, const SessionOptions& opts) = 0;
};

}  // namespace ogx
