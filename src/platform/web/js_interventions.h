#pragma once
// An `interventions` option as the web module hands it over (checked by
// web/module/gpt2-interventions.js: an array of { ablateHead }, { ablateNeurons }, { steer } or
// { patch } objects, vectors as arrays or typed arrays), read into the engine's list.
#include <emscripten/val.h>

#include <vector>

#include "model/interventions.h"

namespace gpt2 {

std::vector<Intervention> interventionsFromJs(const emscripten::val& list);

}  // namespace gpt2
