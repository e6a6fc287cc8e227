// Folders a test binary writes under the temporary directory (built models, tables): named per process, so test
// binaries running at the same time (ctest -j) never share one, and removed when the binary exits, so repeated runs
// leave nothing behind.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace ogx::test {

struct TempFolders {
  std::vector<std::filesystem::path> made;
  ~TempFolders() {
    for (const auto& p : made) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  }
};

inline TempFolders& temp_folders() {
  static TempFolders folders;
  return folders;
}

// <temp>/<name>_<pid>, created if absent (emptied first when `fresh`) and removed at exit.
inline std::string temp_folder(const std::string& name, bool fresh = false) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  if (fresh) std::filesystem::remove_all(p);
  if (!std::filesystem::exists(p)) {
    std::filesystem::create_directories(p);
    auto& made = temp_folders().made;
    if (std::find(made.begin(), made.end(), p) == made.end()) made.push_back(p);
  }
  return p.string();
}

}  // namespace ogx::test
