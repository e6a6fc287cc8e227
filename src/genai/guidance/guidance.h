// Structured output (constrained decoding), as ONNX Runtime GenAI's GeneratorParams.set_guidance(type, data):
// a constraint compiled once against the model's vocabulary, then one Matcher per sequence masks the logits each
// step so that only tokens keeping the output inside the constraint can be picked, and EOS only where the output
// is complete. Types: "json_schema" (json_schema.h), "regex" (the whole output matches; regex.h),
// "lark_grammar" (lark.h), and ogx's "json_object" (JSON mode: any JSON object; data ignored, as OpenAI's
// response_format {"type": "json_object"}).
#pragma once
#include <memory>
#include <string>

#include "genai/guidance/matcher.h"

namespace ogx::genai::guidance {

// The guidance types set_guidance accepts, for messages.
inline constexpr const char* kGuidanceTypes = "json_schema, regex, lark_grammar, json_object";

// Compiles a constraint; throws ogx::Error naming the type and the problem (invalid schema / regex / grammar, a
// limit exceeded).
std::shared_ptr<CompiledGrammar> compile_guidance(const std::string& type, const std::string& data,
                                                  std::shared_ptr<const TokenTrie> trie);
// The grammar alone (no vocabulary), for tests and tools.
std::unique_ptr<Grammar> compile_guidance_grammar(const std::string& type, const std::string& data);

}  // namespace ogx::genai::guidance
