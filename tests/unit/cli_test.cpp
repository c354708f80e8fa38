// The `gpt2` CLI contract: JSON on stdout; on failure one clear line on stderr and exit code 1.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "support/fixture.h"
#include "support/model_fixture.h"
#include "util/file.h"

namespace gpt2 {
namespace {

struct Result {
    int exitCode;
    std::string out;
    std::string err;
};

Result runCli(const std::string& args) {
    const std::string errPath = "/tmp/gpt2-cli-test-stderr.txt";
    const std::string command = std::string(GPT2_CLI) + " " + args + " 2>" + errPath;
    FILE* pipe = popen(command.c_str(), "r");
    std::string out;
    std::array<char, 65536> buffer{};
    std::size_t n;
    while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
    const int status = pclose(pipe);
    return {WEXITSTATUS(status), out, readTextFile(errPath)};
}

std::string idsArg(const std::vector<int>& ids) {
    std::string s;
    for (int id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
}

TEST(Cli, LogitsAttentionAndGenerate) {
    const auto& p1 = testing::tinyPrompts().front();
    const std::string model = "--model " + testing::tinyModelDir() + " --ids " + idsArg(p1.ids);

    auto r = runCli("logits " + model);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_LE(testing::maxAbsDiff(nlohmann::json::parse(r.out)["logits"].get<std::vector<float>>(), p1.lastLogits), 1e-3f);

    r = runCli("attention " + model + " --layer 1 --max-texture-size 256");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["attention"].size(), 4u * 5u * 5u);

    r = runCli("generate " + model + " --max-new-tokens 6 --weights fp32");
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["ids"].get<std::vector<int>>(), std::vector<int>(p1.greedy.begin(), p1.greedy.begin() + 6));
}

TEST(Cli, FailuresPrintOneClearLine) {
    const std::string tiny = testing::tinyModelDir();
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"logits --model /nonexistent --ids 1", "/nonexistent: no config.json"},
        {"logits --model " + tiny + " --ids 1,x", "--ids: \"x\" is not an integer"},
        {"logits --model " + tiny + " --ids 50257", "token id 50257 at position 0 is outside the vocabulary"},
        {"logits --model " + tiny + " --ids 1 --weights fp8", "--weights must be fp32 or fp16"},
        {"frobnicate --model " + tiny, "unknown command \"frobnicate\""},
        {"attention --model " + tiny + " --ids 1 --layer 9", "attention: layer 9 outside [0, 2)"},
        {"generate --model " + tiny + " --ids 1 --max-new-tokens 100", "exceed the model's context of 64"},
    };
    for (const auto& [args, message] : cases) {
        const auto r = runCli(args);
        EXPECT_EQ(r.exitCode, 1) << args;
        EXPECT_TRUE(r.out.empty()) << args;
        EXPECT_NE(r.err.find(message), std::string::npos) << args << " printed: " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << " printed: " << r.err;
    }
}

}  // namespace
}  // namespace gpt2
