#include "providers/vulkan/cli.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "providers/vulkan/device_selection.h"

namespace ogx::vk {

namespace {

int default_selection(const std::vector<DeviceInfo>& devices) {
  try {
    return devices[select_device(devices, ProviderOptions{})].index;
  } catch (const Error&) {
    return -1;
  }
}

void print_table(const std::vector<DeviceInfo>& devices, int selected) {
  for (auto& d : devices) {
    std::cout << (d.index == selected ? "* " : "  ") << "[" << d.index << "] " << d.name << "\n"
              << "      type " << device_type_name(d.type) << ", vendor_id " << d.vendor_id << " (0x" << std::hex
              << d.vendor_id << "), device_id 0x" << d.device_id << std::dec << "\n"
              << "      driver " << d.driver_name << " " << driver_version_string(d) << " (" << d.driver_info
              << "), Vulkan " << api_version_string(d.api_version) << ", subgroup " << d.subgroup_size << "\n";
    for (size_t h = 0; h < d.heaps.size(); h++)
      std::cout << "      heap " << h << ": " << (d.heaps[h].size >> 20) << " MiB"
                << (d.heaps[h].device_local ? " device-local" : "") << ", budget " << (d.heaps[h].budget >> 20)
                << " MiB\n";
    auto& f = d.features;
    std::cout << "      fp16 " << f.fp16_arithmetic << ", storage16 " << f.storage_16bit << ", storage8 "
              << f.storage_8bit << ", int-dot " << f.integer_dot_product << ", coopmat " << f.cooperative_matrix
              << ", bf16 " << f.bf16 << (d.usable() ? "" : "  [unusable by ogx]") << "\n";
  }
  if (selected < 0)
    std::cout << "no GPU is selected by default (a CPU driver is used only with hardware_device_type=cpu)\n";
}

}  // namespace

cli::Runner define_devices(cli::Flags& flags) {
  auto json = std::make_shared<bool>(false);
  flags.flag("--json", *json, "print JSON (with \"error\" and no devices when Vulkan has none)");
  return [json] {
    try {
      auto devices = list_devices();
      int selected = default_selection(devices);
      if (*json)
        std::cout << devices_to_json(devices, selected) << "\n";
      else
        print_table(devices, selected);
      return 0;
    } catch (const Error& e) {
      if (*json)
        std::cout << nlohmann::ordered_json({{"devices", nlohmann::json::array()}, {"error", e.what()}}).dump(2)
                  << "\n";
      std::cerr << "error: " << e.what() << "\n";
      return 1;
    }
  };
}

int cmd_devices(const std::vector<std::string>& args) { return cli::run_command(kDevicesCommand, args); }

}  // namespace ogx::vk
