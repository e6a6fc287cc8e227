// C API: speculative decoding options (on generator params) and statistics (of a generator).
#include <cmath>

#include "api/generator_access.h"

using namespace ogx::api;

namespace {

// Applies a change to a copy of the options, so a rejected value leaves the params unchanged.
template <typename F>
void edit_options(OgxGeneratorParams& p, F&& f) {
  ogx::genai::SpeculativeOptions copy = p.params.speculative;
  f(copy);
  p.params.speculative = copy;
}

double stat(const OgxSpeculativeStats& s, const char* name, const char* fn) {
  for (auto& [n, v] : s.items)
    if (n == name) return v;
  std::string known;
  for (auto& [n, v] : s.items) known += (known.empty() ? "" : ", ") + n;
  fail(OgxErrorCode_InvalidArgument, std::string(fn) + ": unknown statistic '" + name + "' (known: " + known + ")");
}

}  // namespace

extern "C" {

OgxResult* OgxGeneratorParamsSetSpeculativeNumber(OgxGeneratorParams* params, const char* name, double value) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsSetSpeculativeNumber", "params");
    need(name, "OgxGeneratorParamsSetSpeculativeNumber", "name");
    if (!std::isfinite(value))
      fail(OgxErrorCode_InvalidArgument, std::string("speculative option '") + name + "' must be a finite number");
    edit_options(p, [&](auto& o) { o.set_number(name, value); });
  });
}

OgxResult* OgxGeneratorParamsSetSpeculativeBool(OgxGeneratorParams* params, const char* name, bool value) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsSetSpeculativeBool", "params");
    need(name, "OgxGeneratorParamsSetSpeculativeBool", "name");
    edit_options(p, [&](auto& o) { o.set_bool(name, value); });
  });
}

OgxResult* OgxGeneratorParamsGetSpeculativeNumber(const OgxGeneratorParams* params, const char* name, double* value) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsGetSpeculativeNumber", "params");
    need(name, "OgxGeneratorParamsGetSpeculativeNumber", "name");
    need(value, "OgxGeneratorParamsGetSpeculativeNumber", "value");
    *value = p.params.speculative.number(name);
  });
}

OgxResult* OgxGeneratorParamsGetSpeculativeBool(const OgxGeneratorParams* params, const char* name, bool* value) {
  return guard([&] {
    auto& p = live(params, "OgxGeneratorParamsGetSpeculativeBool", "params");
    need(name, "OgxGeneratorParamsGetSpeculativeBool", "name");
    need(value, "OgxGeneratorParamsGetSpeculativeBool", "value");
    *value = p.params.speculative.boolean(name);
  });
}

OgxResult* OgxGenerator_GetSpeculativeStats(const OgxGenerator* generator, OgxSpeculativeStats** out) {
  return guard([&] {
    need(out, "OgxGenerator_GetSpeculativeStats", "out");
    *out = nullptr;
    auto& g = live(generator, "OgxGenerator_GetSpeculativeStats", "generator");
    Locked l(g);
    const ogx::genai::SpeculativeStats* s = l.gen.speculative_stats();
    OgxSpeculativeStats snapshot{(s ? *s : ogx::genai::SpeculativeStats{}).items()};
    snapshot.items.emplace_back("enabled", s ? 1.0 : 0.0);
    *out = make_handle(std::move(snapshot));
  });
}

void OgxDestroySpeculativeStats(OgxSpeculativeStats* stats) { destroy_handle(stats, "OgxDestroySpeculativeStats"); }

OgxResult* OgxSpeculativeStatsGetCount(const OgxSpeculativeStats* stats, const char* name, uint64_t* value) {
  return guard([&] {
    auto& s = live(stats, "OgxSpeculativeStatsGetCount", "stats");
    need(name, "OgxSpeculativeStatsGetCount", "name");
    need(value, "OgxSpeculativeStatsGetCount", "value");
    *value = (uint64_t)stat(s, name, "OgxSpeculativeStatsGetCount");
  });
}

OgxResult* OgxSpeculativeStatsGetNumber(const OgxSpeculativeStats* stats, const char* name, double* value) {
  return guard([&] {
    auto& s = live(stats, "OgxSpeculativeStatsGetNumber", "stats");
    need(name, "OgxSpeculativeStatsGetNumber", "name");
    need(value, "OgxSpeculativeStatsGetNumber", "value");
    *value = stat(s, name, "OgxSpeculativeStatsGetNumber");
  });
}

OgxResult* OgxSpeculativeStatsGetBool(const OgxSpeculativeStats* stats, const char* name, bool* value) {
  return guard([&] {
    auto& s = live(stats, "OgxSpeculativeStatsGetBool", "stats");
    need(name, "OgxSpeculativeStatsGetBool", "name");
    need(value, "OgxSpeculativeStatsGetBool", "value");
    *value = stat(s, name, "OgxSpeculativeStatsGetBool") != 0;
  });
}

}  // extern "C"
