// Indexing shared by the attention passes. Scores and probabilities have one row per
// (query, head): row = (query position - u_pos0) * u_heads + head, and one column per key position.
uniform int u_pos0;        // absolute position of the first query being rendered
uniform int u_heads;
uniform int u_head_texels;  // texels per head: ceil(head_dim / 4), the head padded with zeros

const float kMasked = -1.0e30;  // score of a key after the query (causal mask); exp() of it is 0

int queryPosition(int scoreRow) { return u_pos0 + scoreRow / u_heads; }
int headOf(int scoreRow) { return scoreRow - (scoreRow / u_heads) * u_heads; }
int scoreRow(int queryPos, int head) { return (queryPos - u_pos0) * u_heads + head; }

// The largest unmasked score of a row: keys 0..queryPos, four per texel.
float rowMax(highp sampler2DArray scores, ivec4 L, int row, int queryPos) {
    float m = kMasked;
    for (int b = 0; 4 * b <= queryPos; ++b) {
        vec4 s = fetch(scores, L, row, b);
        m = max(m, max(max(s.x, s.y), max(s.z, s.w)));
    }
    return m;
}
