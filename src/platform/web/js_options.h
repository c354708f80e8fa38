#pragma once
// The options the web module hands the wasm module: a JS object of every option of src/options.json
// that crosses the seam (gpt2-option-check.js has checked them and filled the defaults; null where
// an option is unset), read into the C++ structs through the visitors generated from options.json,
// so an option added there reaches the engine with no code here. A key that is missing fails, naming
// it: an option the JS side forgot is never dropped in silence.
#include <emscripten/val.h>

#include "engine/engine.h"
#include "model/tuning.h"

namespace gpt2 {

// The load and tuning options (tuning's flattened into the object), and `phone`, which the page's
// navigator decides (gpt2.js).
ModelOptions modelOptionsFromJs(const emscripten::val& options);
GenerateOptions generateOptionsFromJs(const emscripten::val& options);

// The same options as the C++ side holds them, written back under their options.json names (null
// where unset): what a test compares with what it sent.
emscripten::val modelOptionsToJs(const ModelOptions& options);
emscripten::val generateOptionsToJs(const GenerateOptions& options);

}  // namespace gpt2
