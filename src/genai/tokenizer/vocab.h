// Token string <-> id table shared by the models.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ogx::tok {

struct StrHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

class Vocab {
 public:
  void add(const std::string& token, int32_t id) {
    map_.emplace(token, id);
    if (id >= static_cast<int32_t>(tokens_.size())) tokens_.resize(static_cast<size_t>(id) + 1);
    tokens_[static_cast<size_t>(id)] = token;
    if (static_cast<size_t>(id) >= present_.size()) present_.resize(static_cast<size_t>(id) + 1, false);
    present_[static_cast<size_t>(id)] = true;
  }
  int32_t find(std::string_view token) const {
    auto it = map_.find(token);
    return it == map_.end() ? -1 : it->second;
  }
  const std::string* token(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !present_[static_cast<size_t>(id)]) return nullptr;
    return &tokens_[static_cast<size_t>(id)];
  }
  size_t size() const { return map_.size(); }

 private:
  std::unordered_map<std::string, int32_t, StrHash, std::equal_to<>> map_;
  std::vector<std::string> tokens_;
  std::vector<bool> present_;
};

}  // namespace ogx::tok
