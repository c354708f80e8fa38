#include "support/fixture.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdlib.h>

#include "util/error.h"
#include "util/file.h"

namespace gpt2::testing {

std::string fixturePath(const std::string& relative) {
    return std::string(GPT2_SOURCE_DIR) + "/tests/fixtures/" + relative;
}

std::string makeTempDir(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    if (!mkdtemp(pattern.data())) fail("cannot create a temporary folder ", pattern);
    return pattern;
}

float maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) fail("maxAbsDiff: sizes ", a.size(), " and ", b.size(), " differ");
    float m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float d = std::fabs(a[i] - b[i]);
        if (std::isnan(d)) return INFINITY;
        m = std::max(m, d);
    }
    return m;
}

std::vector<int> topK(const std::vector<float>& values, int k) {
    std::vector<int> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int a, int b) { return values[a] > values[b]; });
    order.resize(std::size_t(k));
    return order;
}

double logSumExp(const std::vector<float>& values) {
    const double top = *std::max_element(values.begin(), values.end());
    double sum = 0;
    for (const float v : values) sum += std::exp(double(v) - top);
    return top + std::log(sum);
}

const std::vector<std::string>& ggufFixtures() {
    static const std::vector<std::string> names = {
        "tiny-Q8_0",   "narrow-F32",  "narrow-F16",  "narrow-BF16", "narrow-Q8_0", "narrow-Q4_0", "narrow-Q4_1",
        "narrow-Q5_0", "narrow-Q5_1", "wide-Q4_K_M", "wide-Q5_K_M", "wide-Q6_K",   "wide-Q4_K_S"};
    return names;
}

std::string testName(const std::string& fixture) {
    std::string name = fixture;
    for (char& c : name)
        if (c == '-') c = '_';
    return name;
}

}  // namespace gpt2::testing
