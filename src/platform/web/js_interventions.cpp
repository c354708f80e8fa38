#include "platform/web/js_interventions.h"

#include <emscripten/bind.h>

#include "util/error.h"

namespace gpt2 {

using emscripten::val;

namespace {
std::vector<float> floats(const val& v) { return emscripten::convertJSArrayToNumberVector<float>(v); }
}  // namespace

std::vector<Intervention> interventionsFromJs(const val& list) {
    std::vector<Intervention> out;
    const int count = list["length"].as<int>();
    for (int i = 0; i < count; ++i) {
        const val item = list[i];
        if (const val b = item["ablateHead"]; !b.isUndefined())
            out.push_back(AblateHead{b["layer"].as<int>(), b["head"].as<int>()});
        else if (const val b = item["ablateNeurons"]; !b.isUndefined())
            out.push_back(
                AblateNeurons{b["layer"].as<int>(), emscripten::convertJSArrayToNumberVector<int>(b["neurons"])});
        else if (const val b = item["steer"]; !b.isUndefined())
            out.push_back(Steer{b["layer"].as<int>(), floats(b["vector"]),
                                b["scale"].isUndefined() ? 1.0f : b["scale"].as<float>()});
        else if (const val b = item["patch"]; !b.isUndefined())
            out.push_back(Patch{b["layer"].as<int>(), b["position"].as<int>(), floats(b["vector"])});
        else
            fail("interventions[", i, "] is none of ablateHead, ablateNeurons, steer and patch");
    }
    return out;
}

}  // namespace gpt2
