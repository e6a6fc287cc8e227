// Internal: the two tokenizer implementations behind ogx::tok::Tokenizer.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genai/tokenizer/tokenizer.h"  // PieceRules

namespace ogx::tok {

class Backend {
 public:
  virtual ~Backend() = default;
  // Tokenizes valid UTF-8 text without post-processing (no BOS/EOS from a template).
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;
  // Adds special tokens from the post-processor; returns false when there is none that adds tokens.
  virtual bool post_process(std::vector<int32_t>& ids) const = 0;
  // Decoded bytes before UTF-8 repair. Throws ogx::Error for ids out of range.
  virtual std::string decode(std::span<const int32_t> ids, bool skip_special) const = 0;
  virtual int32_t token_to_id(std::string_view token) const = 0;
  virtual std::optional<std::string> id_to_token(int32_t id) const = 0;
  virtual bool is_special(int32_t id) const = 0;
  virtual size_t vocab_size() const = 0;
  virtual PieceRules piece_rules() const = 0;
};

std::unique_ptr<Backend> make_hf_backend(const nlohmann::json& tokenizer_json);
std::unique_ptr<Backend> make_sentencepiece_backend(const std::string& model_path);

// Reads a whole file; `.xz` files are decompressed with liblzma. Throws ogx::Error naming the path.
std::string read_file(const std::string& path);
bool file_exists(const std::string& path);

}  // namespace ogx::tok
