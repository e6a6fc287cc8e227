// Options shared by the commands that load a model: --provider, --provider-option KEY=VALUE, --threads.
#pragma once
#include <memory>
#include <set>
#include <string>

#include "args.h"
#include "genai/model.h"

namespace ogx::cli {

inline const std::set<std::string> kModelValueFlags = {"provider", "provider-option", "threads"};

// Applies the command-line provider choices (--provider, --provider-option, --threads) to a config.
void apply_model_options(genai::Config& c, const Args& a);
// Loads MODEL_DIR's config and applies the command-line provider choices.
genai::Config model_config(const std::string& dir, const Args& a);

}  // namespace ogx::cli
