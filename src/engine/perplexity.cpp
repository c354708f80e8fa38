#include "engine/perplexity.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace gpt2 {

PerplexityResult scorePerplexity(ModelRunner& model, const std::vector<int>& ids, int window) {
    const int context = model.config().contextLength;
    if (window == 0) window = context;
    if (window < 2 || window > context)
        fail("perplexity: window must be in [2, ", context, "] (the model's context), got ", window);
    if (ids.size() < 2) fail("perplexity: the text has ", ids.size(), " token(s); at least 2 are needed to score one");
    double sum = 0;
    PerplexityResult r;
    for (std::size_t start = 0; start + 1 < ids.size(); start += std::size_t(window)) {
        const std::size_t end = std::min(ids.size(), start + std::size_t(window));
        for (float logProb :
             model.tokenLogProbs({ids.begin() + std::ptrdiff_t(start), ids.begin() + std::ptrdiff_t(end)}))
            sum -= logProb;
        r.tokens += std::int64_t(end - start) - 1;
    }
    r.nll = sum / double(r.tokens);
    r.perplexity = std::exp(r.nll);
    return r;
}

}  // namespace gpt2
