// Options shared by the commands that load a model (--provider, --provider-option KEY=VALUE, --threads) and by those
// that generate (the search flags).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/command_line.h"
#include "common/progress_bar.h"
#include "genai/generator.h"
#include "genai/model.h"

namespace ogx::cli {

struct ModelOptions {
  std::string provider;                       // --provider cpu|vulkan|dml; empty: the folder's genai_config.json
  std::vector<std::string> provider_options;  // --provider-option KEY=VALUE, repeatable
  std::optional<int> threads;                 // --threads N (0: the machine's cores)
  bool quiet = false;                         // --quiet: no progress bar on stderr
};

// Search flags shared by the commands that generate (generate, chat): unset ones keep the folder's search options.
struct SamplingOptions {
  bool greedy = false, sample = false;  // --greedy wins over every sampling flag
  std::optional<int> top_k, seed;
  std::optional<double> top_p, temperature, repetition_penalty, presence_penalty, frequency_penalty;
};

// Declares --provider, --provider-option, --threads and --quiet on a command.
void add_model_options(Flags& flags, ModelOptions& o);
// Applies the command-line provider choices to a config.
void apply_model_options(genai::Config& c, const ModelOptions& o);
// Loads MODEL_DIR's config and applies the command-line provider choices.
genai::Config model_config(const std::string& dir, const ModelOptions& o);

// Declares --greedy, --sample, --top-k, --top-p, --temperature, --seed, --repetition-penalty, --presence-penalty,
// --frequency-penalty.
void add_sampling_options(Flags& flags, SamplingOptions& o);
// Sampling is on with --sample or any sampling flag, off with --greedy; with neither, greedy when default_greedy
// (ogx generate), else the folder's search.do_sample (ogx chat).
void apply_sampling_options(genai::GeneratorParams& params, const SamplingOptions& o, bool default_greedy);

// "1,2,3" -> {1, 2, 3}; an item that is not an int32 is an error naming `flag`.
std::vector<int32_t> parse_id_list(const std::string& s, const std::string& flag = "--ids");

}  // namespace ogx::cli
