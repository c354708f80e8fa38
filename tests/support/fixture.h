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

}  // namespace gpt2::testing
