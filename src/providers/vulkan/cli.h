// `ogx devices [--json]`: lists the Vulkan devices and the one the provider would pick by default.
#pragma once
#include <string>
#include <vector>

#include "common/command_line.h"

namespace ogx::vk {
cli::Runner define_devices(cli::Flags& flags);
inline constexpr cli::Command kDevicesCommand = {"devices", "list Vulkan devices [--json]", define_devices};
// args: the words after "devices". Returns the process exit code (0 ok, 1 no device / error, 2 bad usage).
int cmd_devices(const std::vector<std::string>& args);
}  // namespace ogx::vk
