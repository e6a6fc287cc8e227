// Model factory: dispatches tokenizer.json "model.type" to BPE, Unigram or WordPiece.
#include "common/error.h"
#include "genai/tokenizer/components.h"
#include "genai/tokenizer/json_util.h"

namespace ogx::tok {

std::unique_ptr<Model> make_model(const json& j, const std::string& path) {
  if (!j.is_object()) throw_error("tokenizer.json: ", path, ": expected an object");
  std::string type = jstr_or(j, "type", path, "");
  if (type.empty()) {  // older files omit the type: infer it
    if (j.contains("merges")) type = "BPE";
    else if (j.contains("vocab") && j["vocab"].is_array()) type = "Unigram";
    else if (j.contains("vocab")) type = "WordPiece";
  }
  if (type == "BPE") return make_bpe(j, path);
  if (type == "Unigram") return make_unigram(j, path);
  if (type == "WordPiece") return make_wordpiece(j, path);
  throw_error("tokenizer.json: ", jpath(path, "type"), ": unknown model type '", type, "' (supported: BPE, Unigram, WordPiece)");
}

}  // namespace ogx::tok
