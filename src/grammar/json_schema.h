#pragma once
// A JSON schema as a pattern (grammar/regex_syntax.h) whose every match is compact JSON (a space is
// allowed after , and :) that fits the schema. Supported: type (one or a list); objects with
// properties (in their order; the required ones always, the others where the model writes them),
// required, additionalProperties (no other property is ever written); arrays with items, minItems,
// maxItems; strings with minLength, maxLength, pattern (ECMAScript, unanchored unless it says ^ or $;
// its characters are then written without escapes) or format-free text; integers and numbers (at most
// 16 digits before the point, 15 after it and 2 in an exponent, so that every output ends and is a
// double); booleans;
// null; enum; const; anyOf. Annotations (title, description, default, examples, $schema, $id,
// $comment) are ignored. Any other keyword fails, naming it and where it is, as does anything that
// can match no value.
#include <string>

#include "grammar/regex_syntax.h"

namespace gpt2 {

// `schema`: the schema's JSON text.
RegexNode jsonSchemaPattern(const std::string& schema);

}  // namespace gpt2
