#include "genai/guidance/guidance.h"

#include "common/error.h"
#include "genai/guidance/json_schema.h"
#include "genai/guidance/lark.h"

namespace ogx::genai::guidance {

std::unique_ptr<Grammar> compile_guidance_grammar(const std::string& type, const std::string& data) {
  GrammarBuilder b;
  int32_t start;
  if (type == "json_schema") start = compile_json_schema(b, data);
  else if (type == "json_object") start = compile_json_schema(b, "{\"type\": \"object\"}");
  else if (type == "regex") start = b.seq("start", {b.lexeme(data)});
  else if (type == "lark_grammar") start = compile_lark(b, data);
  else throw_error("unknown guidance type '", type, "' (expected one of: ", kGuidanceTypes, ")");
  return b.build(start);
}

std::shared_ptr<CompiledGrammar> compile_guidance(const std::string& type, const std::string& data,
                                                  std::shared_ptr<const TokenTrie> trie) {
  OGX_CHECK(trie, "guidance needs the model's vocabulary");
  return std::make_shared<CompiledGrammar>(compile_guidance_grammar(type, data), std::move(trie));
}

}  // namespace ogx::genai::guidance
