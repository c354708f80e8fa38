// Indexing shared by the attention passes. Scores and probabilities have one row per
// (query, head): row = (query position - u_pos0) * HEADS + head, and one column per key position.
// HEADS and HEAD_TEXELS (texels per head: ceil(head_dim / 4), the head padded with zeros) are
// compiled in (src/model/ops/attention.cpp): loops over a head's texels unroll, and divisions are by constants.
uniform int u_pos0;  // absolute position of the first query being rendered

const float kMasked = -1.0e30;  // score of a key after the query (causal mask); exp() of it is 0

int queryPosition(int scoreRow) { return u_pos0 + scoreRow / HEADS; }
int headOf(int scoreRow) { return scoreRow - (scoreRow / HEADS) * HEADS; }
int scoreRow(int queryPos, int head) { return (queryPos - u_pos0) * HEADS + head; }

// The largest unmasked score of a row: keys 0..queryPos, four per texel. The scores pass writes
// every texel of a row (kMasked past the query), so reading past the query is harmless; four
// texels per iteration keep four fetches in flight.
float rowMax(highp sampler2DArray scores, ivec4 L, int row, int queryPos) {
    vec4 m = vec4(kMasked);
    int last = L.x - 1;
    for (int b = 0; 4 * b <= queryPos; b += 4)
        m = max(max(m, fetch(scores, L, row, b)),
                max(max(fetch(scores, L, row, min(b + 1, last)), fetch(scores, L, row, min(b + 2, last))),
                    fetch(scores, L, row, min(b + 3, last))));
    return max(max(m.x, m.y), max(m.z, m.w));
}
