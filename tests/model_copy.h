// A private copy of a golden model folder that a test may damage (bad-input and hardening tests).
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace ogx::test {

class ModelCopy {
 public:
  explicit ModelCopy(const std::string& src) {
    namespace fs = std::filesystem;
    dir_ = fs::temp_directory_path() / ("ogx_copy_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (auto& e : fs::directory_iterator(src)) {
      fs::copy_file(e.path(), dir_ / e.path().filename());
      fs::permissions(dir_ / e.path().filename(), fs::perms::owner_read | fs::perms::owner_write);
    }
  }
  ~ModelCopy() { std::filesystem::remove_all(dir_); }
  ModelCopy(const ModelCopy&) = delete;
  ModelCopy& operator=(const ModelCopy&) = delete;
  std::string dir() const { return dir_.string(); }
  std::string file(const std::string& n) const { return (dir_ / n).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(file(name)) << text; }
  std::string read(const std::string& name) const {
    std::ifstream f(file(name));
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
  // Replaces the first `from` in file `name` by `to` (a test failure when it is not there).
  void replace(const std::string& name, const std::string& from, const std::string& to) const {
    std::string s = read(name);
    size_t p = s.find(from);
    ASSERT_NE(p, std::string::npos) << from;
    write(name, s.replace(p, from.size(), to));
  }

 private:
  std::filesystem::path dir_;
  static inline int counter_ = 0;
};

}  // namespace ogx::test
