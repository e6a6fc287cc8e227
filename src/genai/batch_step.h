// Many generators of one model decoding together: one model run gives each of them its next token(s). This is the
// step an engine serving many requests calls: generators join (after their prompt) and leave between calls.
#pragma once
#include <vector>

#include "genai/generator.h"

namespace ogx::genai {

// One generate_next_token for every generator that is not done (each at its own length, one row or more), with ONE
// model run for the tokens of all that can share it: generators of one model whose provider keeps KV caches in its
// memory (Vulkan: rows of their KV states side by side, each row with its own past length), picking on the device
// (argmax, or sampling with each generator's own top-k / top-p / temperature and random state) or on the host
// (penalties, beams), without speculative decoding, guidance or extra model inputs other than LoRA adapter weights:
// generators with the same active adapters (or none) share a run, those weights passed once; each set of adapters
// is its own run. The others run their own step; on a provider whose sessions bind KV tensors (the CPU provider)
// that is every generator, one run each. Tokens are those each generator picks alone.
// Queued steps (Generator: picking on the device runs one step ahead): a generator whose step an earlier call queued
// takes this call's token from that step, and generators whose shared run an earlier call queued take theirs from it
// when this call decodes exactly them, in the same order (nothing is dropped or run twice); otherwise such a step is
// dropped (the tokens stay the same, one step's work is lost). queue_ahead: when the call makes one model run (one
// group, or a single generator), it queues the next step of its generators whose rows all pick on the device, so
// the device does not wait for the host between calls; the caller's next use of the model should then be the next
// decode_together of the same generators (another model run drops the queued step). Without it nothing is queued.
void decode_together(const std::vector<Generator*>& generators, bool queue_ahead = false);

}  // namespace ogx::genai
