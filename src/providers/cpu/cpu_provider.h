// The CPU execution provider: the fallback and the reference every GPU result is checked against.
#pragma once
#include <memory>

#include "exec/kernel.h"
#include "exec/session.h"

namespace ogx::cpu {

const KernelRegistry& kernel_registry();
std::unique_ptr<ExecutionProvider> make_cpu_provider();

}  // namespace ogx::cpu
