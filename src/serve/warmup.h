// Warm-up of a freshly loaded model before `ogx serve` accepts requests (warmup.cpp).
#pragma once
#include <memory>

#include "genai/model.h"

namespace ogx::serve {

// Runs a few throwaway steps (a prompt, one sequence alone, two together); never throws (a failure is printed).
void warm_up(const std::shared_ptr<genai::Model>& model);

}  // namespace ogx::serve
