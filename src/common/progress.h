// Progress of long work (weight conversion and upload, writing a model, benchmark repeats), reported to one
// process-wide sink that a front end installs: ogx's terminal bar (tools/ogx/progress_bar.h). Libraries only call
// report(); without a sink that costs one atomic load. The sink may be called from several threads.
#pragma once
#include <cstdint>
#include <functional>
#include <string_view>

namespace ogx::progress {

enum class Unit { bytes, items };

struct Event {
  std::string_view task;  // what is being done: "uploading weights"
  uint64_t done = 0;      // of total, in unit; done == total ends the task
  uint64_t total = 0;
  Unit unit = Unit::bytes;
};

using Sink = std::function<void(const Event&)>;

// Installs the sink (an empty one removes it). Not for use while another thread reports.
void set_sink(Sink sink);
void report(std::string_view task, uint64_t done, uint64_t total, Unit unit = Unit::bytes);

}  // namespace ogx::progress
