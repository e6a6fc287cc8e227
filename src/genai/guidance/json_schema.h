// JSON schema (draft 2020-12 / draft 7 subset, as llguidance accepts) to grammar rules.
// Supported: type (one or a list; OpenAPI `nullable`), enum, const, anyOf, oneOf (as anyOf: generated values
// should match one branch; give disjoint branches), allOf (merged), $ref / $defs / definitions (local JSON
// pointers; recursion is a grammar cycle), properties (in schema order), required, additionalProperties (default
// true; extra keys differ from the listed ones and have no escapes; propertyNames {"maxLength": N} bounds them),
// items, prefixItems (draft 7: items array + additionalItems), minItems, maxItems, minLength, maxLength, pattern (unanchored unless ^ / $), format (date, time, date-time,
// email, uuid, uri, ipv4, hostname), minimum, maximum, exclusiveMinimum, exclusiveMaximum (draft 4 booleans
// too). Annotations (title, description, default, examples, $schema, $id, $comment, ...) are ignored; other
// validation keywords are errors naming the keyword and the schema path, unless "x-guidance": {"lenient": true}.
// Top-level "x-guidance" options as llguidance: whitespace_flexible (default true), whitespace_pattern,
// item_separator, key_separator, lenient, coerce_one_of; flexible whitespace is at most 64 characters per gap (a
// departure: llguidance's is unbounded, which lets a weak model pad until max_length; whitespace_pattern "[ \n]+"
// restores it). Whitespace is never allowed before the value or after it.
#pragma once
#include <string>

#include "genai/guidance/grammar.h"

namespace ogx::genai::guidance {

// Adds the schema's rules to `b`; returns the symbol of a JSON value that validates. `schema_text` is the schema
// as JSON. Throws ogx::Error naming the schema path and the problem.
int32_t compile_json_schema(GrammarBuilder& b, const std::string& schema_text);

}  // namespace ogx::genai::guidance
