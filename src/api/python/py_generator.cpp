// Python: Generator. The GIL is released while the model runs.
#include "py_util.h"

namespace ogx::py_module {

namespace {

void set_logits(ogx::Generator& g, const py::object& values) {
  if (py::isinstance<py::str>(values)) throw py::type_error("set_logits: expected a float32 array");
  py::array a = py::module_::import("numpy").attr("asarray")(values);
  char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u')
    throw py::type_error("set_logits: expected an array of numbers, got " + std::string(py::str(a.dtype())));
  auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
  std::vector<int64_t> shape(f.shape(), f.shape() + f.ndim());
  auto tensor = ogx::Tensor::Create(const_cast<float*>(f.data()), shape, OgxElementType_float32);
  nogil([&] { g.SetLogits(*tensor); });  // copied: `f` may go once this returns
}

py::array_t<float> get_logits(ogx::Generator& g) {
  auto t = nogil([&] { return g.GetLogits(); });
  std::vector<int64_t> shape = t->Shape();
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  py::array_t<float> a(dims);
  std::copy_n(static_cast<const float*>(t->Data()), t->ElementCount(), a.mutable_data());
  return a;
}

// A 2-D numpy array or a list of token-id sequences (one prompt per batch row), as opposed to one flat sequence.
bool is_rows(const py::object& tokens) {
  if (py::isinstance<py::array>(tokens)) return py::reinterpret_borrow<py::array>(tokens).ndim() == 2;
  if (py::isinstance<py::str>(tokens) || !py::isinstance<py::sequence>(tokens)) return false;
  py::sequence seq = py::reinterpret_borrow<py::sequence>(tokens);
  if (py::len(seq) == 0) return false;
  py::object first = seq[0];
  return !py::isinstance<py::str>(first) && (py::isinstance<py::sequence>(first) || py::isinstance<py::array>(first));
}

void append_tokens(ogx::Generator& g, const py::object& tokens) {
  if (py::isinstance<ogx::Tensor>(tokens)) {  // an og.Tensor (e.g. of int32 ids): as its numpy array
    append_tokens(g, to_numpy(tokens.cast<const ogx::Tensor&>()));
    return;
  }
  if (!is_rows(tokens)) {
    auto ids = token_ids(tokens, "append_tokens");
    nogil([&] { g.AppendTokens(ids); });
    return;
  }
  auto rows = token_rows(tokens, "append_tokens");
  nogil([&] {
    ogx::Sequences seqs;
    for (auto& r : rows) seqs.Append(r);
    g.AppendTokenSequences(seqs);
  });
}

}  // namespace

void bind_generator(py::module_& m) {
  py::class_<ogx::Generator>(m, "Generator", "Runs the model token by token.")
      .def(py::init([](const ogx::Model& md, const ogx::GeneratorParams& p) {
             return nogil([&] { return std::make_unique<ogx::Generator>(md, p); });
           }),
           py::arg("model"), py::arg("params"))
      .def("is_done", [](const ogx::Generator& g) { return nogil([&] { return g.IsDone(); }); })
      .def("append_tokens", &append_tokens, py::arg("tokens"),
           "Run the model on new tokens: a list of ints or 1-D integer array (batch size 1), or one prompt per batch "
           "row as a 2-D integer array or a list of lists (padded on the right with the model's pad_token_id).")
      .def("generate_next_token", [](ogx::Generator& g) { nogil([&] { g.GenerateNextToken(); }); })
      .def("get_next_tokens",
           [](const ogx::Generator& g) {
             auto v = nogil([&] {
               auto s = g.GetNextTokens();
               return std::vector<int32_t>(s.begin(), s.end());
             });
             return to_numpy(v);
           },
           "The last token of each row (numpy int32 [batch_size x num_beams]).")
      .def("get_sequence",
           [](const ogx::Generator& g, int64_t index) {
             if (index < 0) throw py::index_error("get_sequence: index must be >= 0");
             return to_numpy(nogil([&] { return g.GetSequence(static_cast<size_t>(index)); }));
           },
           py::arg("index"),
           "All tokens of a sequence (padded prompt + generated), numpy int32: batch row `index` (greedy), or with "
           "beam search hypothesis index % num_return_sequences of prompt index // num_return_sequences, best first.")
      .def("get_logits", &get_logits, "Logits the next tokens are picked from: numpy float32 [batch_size x num_beams, 1, vocab] (a copy).")
      .def("set_logits", &set_logits, py::arg("logits"), "Replace the logits the next token is picked from.")
      .def("rewind_to",
           [](ogx::Generator& g, int64_t n) {
             if (n < 0) throw py::value_error("rewind_to: length must be >= 0");
             nogil([&] { g.RewindTo(static_cast<size_t>(n)); });
           },
           py::arg("new_length"))
      .def("token_count", [](const ogx::Generator& g) { return nogil([&] { return g.TokenCount(); }); })
      .def("get_input",
           [](const ogx::Generator& g, const std::string& name) {
             return to_numpy(*nogil([&] { return g.GetInput(name.c_str()); }));
           },
           py::arg("name"), "A numpy copy of an input of the latest model run (or one set with set_model_input).")
      .def("get_output",
           [](const ogx::Generator& g, const std::string& name) {
             return to_numpy(*nogil([&] { return g.GetOutput(name.c_str()); }));
           },
           py::arg("name"),
           "A numpy copy of an output of the latest model run: 'logits' [rows, tokens of that run, vocab], or another "
           "graph output such as 'hidden_states'.")
      .def("set_model_input",
           [](ogx::Generator& g, const std::string& name, const py::object& value) {
             auto t = to_tensor(value);
             nogil([&] { g.SetModelInput(name.c_str(), *t); });
           },
           py::arg("name"), py::arg("value"), "Feed an extra model input (a copy of the array) on every following run.")
      .def("snapshot_state", [](ogx::Generator& g) { nogil([&] { g.SnapshotState(); }); },
           "Snapshot recurrent state for a later rewind_to (ogx runs no model with such state: no change).")
      .def("set_hidden_states",
           [](ogx::Generator& g, const py::object& value) {
             auto t = to_tensor(value);
             nogil([&] { g.SetHiddenStates(*t); });
           },
           py::arg("hidden_states"),
           "The model's hidden_states input (model.decoder.inputs.hidden_states) for the following runs: [batch, "
           "tokens, hidden_size], copied. A model without that input: no change.")
      .def("set_inputs",
           [](ogx::Generator& g, const ogx::NamedTensors& inputs) { nogil([&] { g.SetInputs(inputs); }); },
           py::arg("named_tensors"), "set_model_input for every tensor of a NamedTensors.")
      .def("get_speculative_stats",
           [](const ogx::Generator& g) {
             auto s = nogil([&] { return g.GetSpeculativeStats(); });
             py::dict d;  // upstream's keys: counts as ints, the timings and estimates as floats
             for (const char* n :
                  {"rounds", "completed_rounds", "interrupted_rounds", "active_rounds", "draft_tokens_proposed",
                   "draft_tokens_evaluated", "draft_tokens_accepted", "correction_tokens", "bonus_tokens",
                   "tokens_queued", "tokens_emitted", "tokens_discarded", "tokens_buffered", "draft_forward_passes",
                   "target_forward_passes", "effective_k", "adaptive_k_increases", "adaptive_k_decreases",
                   "adaptive_k_observations", "adaptive_k_probes", "cooldown_entries", "cooldown_steps",
                   "cooldown_remaining", "standard_fallback_steps", "full_accept_rounds", "partial_accept_rounds",
                   "zero_accept_rounds", "target_verify_forward_passes", "target_reanchor_forward_passes",
                   "target_reconciliation_forward_passes", "ngram_lookup_hits", "ngram_lookup_misses",
                   "ngram_lookup_tokens_proposed", "ngram_chained_tokens_proposed",
                   "ngram_grammar_candidate_rejections", "ngram_history_syncs", "ngram_history_tokens_synced"})
               d[n] = s->GetCount(n);
             d["formula_supported"] = s->GetBool("formula_supported");
             for (const char* n :
                  {"total_draft_ms", "total_target_ms", "total_reconciliation_ms", "total_target_verify_ms",
                   "total_target_reanchor_ms", "total_ngram_history_sync_ms", "total_ngram_lookup_ms",
                   "avg_draft_ms_per_token", "acceptance_rate", "avg_draft_tokens_per_round",
                   "mean_emitted_tokens_per_round", "expected_tokens_per_round", "avg_target_ms_per_round",
                   "target_baseline_ms_per_token", "target_overhead_ratio", "estimated_speedup", "observed_speedup",
                   "adaptive_k_throughput"})
               d[n] = s->GetNumber(n);
             d["enabled"] = s->GetBool("enabled");
             return d;
           },
           "Speculative decoding's counters (drafted, accepted, ...) as a dict; zeros when it is off.")
      .def("set_runtime_option",
           [](ogx::Generator& g, const std::string& key, const std::string& value) {
             nogil([&] { g.SetRuntimeOption(key.c_str(), value.c_str()); });
           },
           py::arg("key"), py::arg("value"),
           "'terminate_session': '1' stops the generator (is_done() is True, further steps raise), '0' resumes.");
}

}  // namespace ogx::py_module
