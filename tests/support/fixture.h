#pragma once
// Paths of the committed fixtures, and comparison helpers shared by the tests.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpt2::testing {

std::string fixturePath(const std::string& relative);  // under tests/fixtures/

// A new folder of its own under /tmp (CTest runs test cases in parallel processes).
std::string makeTempDir(const std::string& prefix);

float maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);
std::vector<int> topK(const std::vector<float>& values, int k);
// log Σ exp(values), in double and shifted by the largest value, so that keys of hundreds do not overflow.
double logSumExp(const std::vector<float>& values);

// The llama.cpp GGUF fixtures (tests/fixtures/gguf/*.gguf), one per tensor type, by file name.
const std::vector<std::string>& ggufFixtures();
// A fixture's name as a parameterized test's name ("narrow-Q4_0" -> "narrow_Q4_0").
std::string testName(const std::string& fixture);

}  // namespace gpt2::testing
