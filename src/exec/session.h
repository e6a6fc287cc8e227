// The one provider interface: a provider turns a loaded model into a Session that runs it.
// Tensors crossing this boundary are host tensors; a provider keeps device state (weights, recorded command
// buffers) inside its session. A provider that keeps KV caches in its own memory offers the decode loop's interface
// (exec/decode_session.h) through Session::decoder().
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
  // A session of the same provider whose device this one shares (a draft model beside its target: one queue, one
  // memory allocator, one pipeline library; the two are then used from one thread at a time). The provider shares
  // it only when both ask for the same device and settings; null: a device of its own.
  const class Session* share_device_with = nullptr;
};

// How a provider may pick the next token on its device (so only token ids come back each step).
class DecodeSession;

// One token's change by a row's logit processing (genai's Sampler::logit_edits), applied in this order: with
// `repetition` the logit is divided by the repetition penalty when positive, multiplied by it when negative;
// `subtract` (presence / frequency penalties) is taken off in double precision; a `ban` (no-repeat n-gram, EOS before
// min_length) makes it the lowest float instead. Tokens without an edit keep their logit.
struct TokenEdit {
  int32_t token = 0;
  bool repetition = false, ban = false;
  double subtract = 0.0;
  // With RowEdits::pending, when the pending token is this one: its edit with that occurrence counted as well.
  bool pending_repetition = false;
  double pending_subtract = 0.0;
};

// One row's edits for a run (DecodeSession::set_logit_edits). `pending`: the edits reflect the row's sequence without
// its latest token, which the device picked in the step before and the run takes as its input (a step queued before
// the host has that token); the device adds it: the edit naming it applies its pending_* values instead, or, when no
// edit names it, `fresh` applies to it (fresh.token is not read).
struct RowEdits {
  std::vector<TokenEdit> edits;  // ascending by token, each token once
  float repetition_penalty = 1.0f;
  bool pending = false;
  TokenEdit fresh;
};

struct DeviceSampling {
  bool greedy = true;        // argmax (lowest index on ties); else top-k / top-p / temperature
  int top_k = 0;             // 0: off
  float top_p = 1.0f;
  float temperature = 1.0f;
  uint64_t seed = 0;         // of the device's random state
  bool token_mask = false;   // only tokens of a packed bit mask may be picked (set_token_mask before each run)
  // > 0 (beam search): no token is picked; instead each row's log-softmax statistics and its this many largest
  // logits come back (DecodeSession::beam_candidates), so the logits stay on the device.
  int beam_candidates = 0;
  // The picks (argmax or beam candidates) read the logits with each row's edits applied (DecodeSession::
  // set_logit_edits before each run): penalties and bans on the device; the model's logits stay as they are.
  bool logit_edits = false;
};

class Session {
 public:
  virtual ~Session() = default;
  // inputs: every graph input by name. outputs: the requested outputs; an entry holding a tensor is a pre-bound
  // buffer the session writes into (e.g. a KV cache shared between past and present), an empty entry is filled in.
  virtual void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) = 0;
  virtual const Graph& graph() const = 0;
  virtual std::string provider_name() const = 0;
  // Several independent runs of this graph (each its own inputs and outputs: generators with their own KV caches)
  // taken node by node together, so that a projection with constant weights reads them once for all the runs' rows.
  // Each run's outputs are those run() gives it. The default runs them one after another.
  struct Run {
    const std::vector<NamedTensor>* inputs;
    std::vector<NamedTensor>* outputs;
  };
  virtual void run_together(const std::vector<Run>& runs) {
    for (const Run& r : runs) run(*r.inputs, *r.outputs);
  }
  // Whether run_together shares weight reads between the runs (else it is no faster than running them in turn).
  virtual bool runs_together() const { return false; }
  // The decode loop's interface (exec/decode_session.h) when the provider keeps the decoder's KV cache in its own
  // (device) memory, in states the caller owns; null when it does not (the caller binds past/present tensors).
  virtual DecodeSession* decoder() { return nullptr; }
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
