// Helpers for builder tests: golden paths, temp dirs, loading a model and its external initializer bytes.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "temp_folder.h"

namespace ogx::builder::test {

inline std::string golden_dir() { return std::string(OGX_SHARED_DIR) + "/golden/models"; }

inline bool have_goldens() { return std::filesystem::exists(golden_dir() + "/llama/hf/config.json"); }

// An empty directory of its own per tag, removed when the test binary exits (tests/temp_folder.h).
inline std::string temp_dir(const std::string& tag) { return ogx::test::temp_folder("ogx_builder_" + tag, true); }

inline onnx::ModelProto load_model(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in && m.ParseFromIstream(&in)) << path;
  return m;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// name -> raw bytes of every initializer (external data resolved against dir/model.onnx.data).
inline std::map<std::string, std::string> initializer_bytes(const onnx::ModelProto& m, const std::string& dir) {
  std::string data = read_file(dir + "/model.onnx.data");
  std::map<std::string, std::string> out;
  for (const auto& t : m.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) {
      out[t.name()] = t.raw_data();
      continue;
    }
    size_t off = 0, len = 0;
    for (const auto& e : t.external_data()) {
      if (e.key() == "offset") off = std::stoull(e.value());
      if (e.key() == "length") len = std::stoull(e.value());
    }
    out[t.name()] = off + len <= data.size() ? data.substr(off, len) : std::string("<out of range>");
  }
  return out;
}

}  // namespace ogx::builder::test
