// The decode loop's optional provider interface (Session::decoder()), for providers that keep the decoder's KV
// cache in their own (device) memory. The cache of a generator's rows is a KvState the caller owns: made by
// create_kv, named by every run that reads or writes it, and returned to the provider's pool when destroyed. Runs
// may take rows of several KvStates at once (generators decoding together, genai/batch_step.h), each at its own
// length: the batch of the run's inputs is the sum of their rows, in order.
// Lengths: a run's total_sequence_length is the longest row's; each row's keys go right after its own valid ones
// (seqlens_k, as the attention kernels place them), so rows of different lengths share one run.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/session.h"

namespace ogx {

// The KV cache of `rows()` sequences, owned by the caller. Its positions live in the provider's memory.
class KvState {
 public:
  virtual ~KvState() = default;
  virtual int rows() const = 0;
  virtual int64_t length() const = 0;  // positions held (of the longest row: total_sequence_length of its last run)
  virtual size_t bytes() const = 0;    // provider memory it holds
};

// Rows of one run: all rows of `state`, which holds `total` positions after the run (its length() is the past).
// `sampling` (optional): how these rows pick their next tokens on the device when it differs from the run's
// (generators decoding together, each with its own search options and seed); null: DecodeRun::sampling.
struct KvRows {
  KvState* state = nullptr;
  int64_t total = 0;
  const DeviceSampling* sampling = nullptr;
};

struct DecodeRun {
  std::vector<KvRows> kv;                    // the run's rows, in order (their sum is the inputs' batch)
  const DeviceSampling* sampling = nullptr;  // also pick each row's next token on the device (null: no)
};

// One row's logits as beam search needs them (DeviceSampling::beam_candidates): its log-softmax statistics and its
// K largest logits. A log-prob is (logit - max) - log(sum).
struct BeamRow {
  int64_t vocab = 0;            // the row's length
  float max = 0, sum = 0;       // the row's largest logit; the sum of exp(logit - max) over the row
  std::vector<float> logits;    // the K largest logits, descending (equal ones: lower token id first)
  std::vector<int32_t> tokens;  // their token ids
};

class DecodeSession {
 public:
  virtual ~DecodeSession() = default;
  // A cache for `rows` sequences of up to max_length positions; memory is taken as the rows grow.
  virtual std::unique_ptr<KvState> create_kv(int rows, int64_t max_length) = 0;
  // Forgets positions from `length` on.
  virtual void rewind_kv(KvState& kv, int64_t length) = 0;
  // Row i becomes a copy of row source_rows[i]; source_rows.size() is the new row count (beam search reorders its
  // beams each step and expands a prompt's row to its beams). On the device, no host round trip. Positions below
  // final_positions are final in every row (rows write after their own positions, which may end before the state's
  // length: a prompt's trailing pads): the provider may share them between rows instead of copying them.
  virtual void reorder_kv(KvState& kv, const std::vector<int32_t>& source_rows, int64_t final_positions) = 0;
  // Whether runs of `rows` rows can pick next tokens on the device this way (from
  // SessionOptions::last_position_output).
  virtual bool can_sample(const DeviceSampling& s, int64_t rows) const = 0;
  // With DeviceSampling::token_mask (guidance): the tokens the next run of `kv` may pick on the device, a packed bit
  // mask per row (bits: [rows x words_per_row], bit t of word t / 32 of its row; words_per_row = ceil(vocab / 32)),
  // uploaded as is (no logits read back). False: unsupported (the caller masks on the host).
  virtual bool set_token_mask(const KvState& kv, const std::vector<uint32_t>& bits, int64_t words_per_row) {
    return false;
  }
  // With DeviceSampling::logit_edits: each row's edits for the next run or queued step (rows: the run's rows in
  // order; a row without edits keeps its logits). A queued step's rows may be `pending` (their input tokens come
  // from the device). False: unsupported (the caller processes logits on the host).
  virtual bool set_logit_edits(const std::vector<RowEdits>& rows) { return false; }
  // The most positions one run of a prompt should take (0: no limit): the caller runs a longer prompt as chunks of
  // this many tokens in order, each seeing the keys of the ones before it, so activation memory and the size of a
  // recorded step are bounded by the chunk, not by the prompt.
  virtual int64_t prefill_chunk() const { return 0; }
  // True when a run of a right-padded batch (rows of different real lengths, GroupQueryAttention's seqlens_k) whose
  // caller leaves SessionOptions::last_position_output unbound returns each row's last real position ([rows, 1,
  // ...]), not position S - 1: the caller need not take every position's output.
  virtual bool last_real_positions() const { return false; }
  // Session::run with the KV cache of `r.kv`. A run whose outputs do not ask for the last-position output leaves
  // it on the device (read_last_output).
  virtual void run(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs, const DecodeRun& r) = 0;
  // The tokens the last run (or the last finished queued step) picked on the device for kv's rows; empty when it
  // picked none or did not run kv.
  virtual std::vector<int64_t> sampled_tokens(const KvState& kv) const = 0;
  // kv's rows of the last run's beam candidates (DeviceSampling::beam_candidates); empty when it made none or did
  // not run kv.
  virtual std::vector<BeamRow> beam_candidates(const KvState& kv) const { return {}; }
  // kv's rows of the last run's last-position output [rows, 1, ...]; false when unavailable (the last run did not
  // run kv or returned it already).
  virtual bool read_last_output(const KvState& kv, Tensor* out) = 0;
  // Queued decode steps, for runs that pick tokens on the device: queue_next submits a step without waiting
  // for it — `inputs` as for run() with no outputs, except that the values of `token_input` ([B, 1]) are the tokens
  // the step before it picked on the device, so a step can be queued while the one before it still runs. At most
  // two steps are queued; false: nothing was queued (run synchronously). finish_queued(kv) waits for the oldest and
  // makes it the last run; false when none of kv's is queued (another run dropped them). drop_queued() waits for
  // all and forgets them (their KV writes lie past the callers' sequences: a later run at those positions
  // overwrites them; sampling rows get back the random state the oldest dropped step started from, so tokens are
  // those of runs never queued). run() drops queued steps first.
  virtual bool queue_next(const std::vector<NamedTensor>& inputs, const std::string& token_input,
                          const DecodeRun& r) = 0;
  virtual bool finish_queued(const KvState& kv) = 0;
  virtual void drop_queued() = 0;
  // True when a step of kv's is queued.
  virtual bool has_queued(const KvState& kv) const = 0;
  // True when the oldest queued step runs exactly these states' rows, in this order (its finish_queued sets the
  // lengths of all of them).
  virtual bool queued_for(const std::vector<const KvState*>& states) const { return false; }
};

}  // namespace ogx
