// Shared by the generator's C API files: locking a generator, and the checks and log lines around its runs.
#pragma once
#include "api/handles.h"

namespace ogx::api {

// The generator's state, locked: its own mutex, then the model's (forward passes of one model are serialized).
struct Locked {
  std::lock_guard<std::mutex> gen_lock;
  ogx::genai::Generator& gen;
  explicit Locked(const OgxGenerator& g) : gen_lock(g.mu), gen(*g.gen) {}
};

// Runs `f` (which may run the model) with the model's lock held.
template <typename F>
void run_model(const OgxGenerator& g, F&& f) {
  std::lock_guard<std::mutex> lk(g.shared->run_mu);
  f();
}

// Fails with "session terminated" after SetRuntimeOption("terminate_session", "1").
void check_not_terminated(const OgxGenerator& g, const char* fn);
// The model_input_values / model_output_values / model_logits log lines of the latest run.
void log_run(const ogx::genai::Generator& gen);

}  // namespace ogx::api
