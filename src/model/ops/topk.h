#pragma once
// Top-k of rows of logits on the GPU, one candidate per round (shaders/topk.glsl): the block pass
// finds each block's best logit after candidate `rank - 1`, the select pass writes the best of those
// as candidate `rank`. Each row of logits is searched on its own.
#include "gl/pass.h"

namespace gpt2 {

// `blocks` has a row of ceil(logit texels / blockTexels) texels per row of logits; `candidates` a row
// per rank, whose texel j is logits row j's candidate of that rank.
Pass topkBlockPass(ProgramCache& programs, Texture& blocks, const Texture& logits, const Texture& candidates, int vocab,
                   int blockTexels);
Pass topkSelectPass(ProgramCache& programs, Texture& candidates, const Texture& blocks);

// Blocks of about sqrt(texels) texels balance the two levels.
int topkBlockTexels(int logitTexels);
// Columns of the `blocks` texture for a row of `logitTexels` texels of logits.
int topkBlockColumns(int logitTexels);

// Both passes: candidates[0, k) = the k largest logits (logit, id), best first, ties to the smaller id,
// of logits rows [0, rows), into candidate texels [firstColumn, firstColumn + rows).
class TopkOp {
public:
    TopkOp(ProgramCache& programs, Texture& candidates, Texture& blocks, const Texture& logits, int vocab);
    void run(int k, int rows = 1, int firstColumn = 0);

private:
    Pass block_, select_;
};

}  // namespace gpt2
