#pragma once
// Top-k of a row of logits on the GPU, one candidate per round (shaders/topk.glsl): the block pass
// finds each block's best logit after candidate `rank - 1`, the select pass writes the best of those
// as candidate `rank`.
#include "gl/pass.h"

namespace gpt2 {

// `blocks` has one row of ceil(logit texels / blockTexels) texels; `candidates` one row per rank.
Pass topkBlockPass(ProgramCache& programs, Texture& blocks, const Texture& logits, const Texture& candidates, int vocab,
                   int blockTexels);
Pass topkSelectPass(ProgramCache& programs, Texture& candidates, const Texture& blocks);

// Blocks of about sqrt(texels) texels balance the two levels.
int topkBlockTexels(int logitTexels);
// Columns of the `blocks` texture for a row of `logitTexels` texels of logits.
int topkBlockColumns(int logitTexels);

// Both passes: candidates[0, k) = the k largest logits (logit, id), best first, ties to the smaller id.
class TopkOp {
public:
    TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, const Texture& logits, int vocab);
    void run(int k);

private:
    Pass block_, select_;
};

}  // namespace gpt2
