#include "support/model_fixture.h"

#include <map>

#include "support/fixture.h"
#include "util/file.h"

namespace gpt2::testing {

std::string tinyModelDir() { return fixturePath("gpt2-tiny"); }
std::string demoModelDir() { return std::string(GPT2_SOURCE_DIR) + "/web/models/brown-demo"; }

const std::vector<ReferencePrompt>& tinyPrompts() { return referencePrompts("gpt2-tiny"); }

const std::vector<ReferencePrompt>& referencePrompts(const std::string& fixture) {
    static std::map<std::string, std::vector<ReferencePrompt>> cache;
    if (cache.count(fixture)) return cache[fixture];
    const nlohmann::json reference = nlohmann::json::parse(readTextFile(fixturePath(fixture + "/reference.json")));
    return cache[fixture] = [&] {
        std::vector<ReferencePrompt> out;
        for (auto& [key, p] : reference["prompts"].items()) {
            ReferencePrompt r;
            r.key = key;
            r.ids = p["ids"].get<std::vector<int>>();
            r.lastLogits = p["last_logits"].get<std::vector<float>>();
            for (auto& position : p["all_logits_top5"]) {
                r.top5Ids.push_back(position["ids"].get<std::vector<int>>());
                r.top5Logits.push_back(position["values"].get<std::vector<float>>());
            }
            r.greedy = p["greedy"].get<std::vector<int>>();
            r.greedyMargins = p["greedy_margins"].get<std::vector<float>>();
            if (p.contains("attentions"))
                for (auto& layer : p["attentions"])
                    for (auto& head : layer)
                        for (auto& query : head)
                            for (auto& v : query) r.attention.push_back(v.get<float>());
            out.push_back(std::move(r));
        }
        return out;
    }();
}

}  // namespace gpt2::testing
