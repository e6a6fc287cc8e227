// The decoder's key/value cache, in the two modes of ONNX Runtime GenAI:
//  - shared (past_present_share_buffer): one buffer per layer and K/V, [B, Nkv, capacity, H], bound as both the
//    past input and the present output; the model writes new positions in place. Capacity grows in chunks up to
//    max_length, so a model with a 131072 context does not reserve 131072 positions for a short chat.
//  - separate: past inputs are the previous step's present outputs, [B, Nkv, length, H].
//  - on the provider: the session keeps caches in its own (device) memory (Session::decoder()); this cache owns a
//    KvState of its rows from the provider's pool, names it in every run (run_model) and binds no tensors.
// Rows (the batch dimension) are the generator's sequences: batch x beams. Beam search reorders them each step
// (reorder_rows) and expands a prompt's row to its beams after the prompt.
#pragma once
#include <string>
#include <vector>

#include "exec/decode_session.h"
#include "exec/session.h"
#include "genai/model.h"

namespace ogx::genai {

class KvCache {
 public:
  KvCache(const Model& model, int batch, int max_length, bool shared);

  // Makes room for `total` positions (shared mode) and adds past inputs / present outputs for the next run.
  void bind(int64_t total, std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs);
  // Takes the present outputs of a run as the new state.
  void commit(const std::vector<NamedTensor>& outputs, int64_t total);
  // Forgets positions from `length` on.
  void rewind(int64_t length);
  // Row i becomes a copy of row source_rows[i] (every row index < rows()); source_rows.size() is the new row count
  // (larger: a prompt's row expanded to its beams). In place where the row count stays: only rows that change are
  // written, and only rows that are both read and overwritten are saved first. Only the `length()` positions held
  // are copied. A cache on the provider is reordered there (DecodeSession::reorder_kv), where the positions below
  // final_positions (no row writes them again) may be shared between rows rather than copied.
  void reorder_rows(const std::vector<int32_t>& source_rows, int64_t final_positions = 0);
  // Runs the model with this cache: on the provider with its KvState (holding `total` positions after the run,
  // `sampling`: also pick the next tokens on the device), else a plain run over the bound tensors.
  void run_model(const std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs, int64_t total,
                 const DeviceSampling* sampling);

  int64_t length() const { return length_; }
  int rows() const { return batch_; }
  int64_t capacity() const { return capacity_; }
  bool shared() const { return shared_; }
  bool on_provider() const { return state_ != nullptr; }
  DecodeSession* decoder() const { return decoder_; }  // null: tensors bound by the caller
  KvState* state() const { return state_.get(); }
  size_t bytes() const;

 private:
  void grow(int64_t needed);
  // The combined layout (DecoderIO::combined_kv): past_%d = [key; value] of each layer.
  void bind_combined(std::vector<NamedTensor>& inputs, std::vector<NamedTensor>& outputs) const;
  const Model& model_;
  int batch_;
  int max_length_;
  bool shared_;
  DecodeSession* decoder_ = nullptr;  // the provider's, when it keeps the cache
  std::unique_ptr<KvState> state_;    // this cache's rows in the provider's pool (decoder_)
  int64_t length_ = 0;
  int64_t capacity_ = 0;
  std::vector<std::string> past_k_, past_v_, present_k_, present_v_;
  std::vector<Tensor> k_, v_;  // per layer: [rows, Nkv, capacity (shared) or length, H] (combined: halves of one)
};

}  // namespace ogx::genai
