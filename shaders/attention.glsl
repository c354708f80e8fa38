// Indexing shared by the attention passes over a run of u_count queries from position u_pos0.
// Scores have one row per (head, query) and one column per key position: row = head * u_stride +
// query - u_pos0, where u_stride is u_count rounded up to whole row groups (Pass::writeRowGroups) so
// that a fragment's ROWS queries share a head; for a decode step's one query, row = head. HEADS and
// HEAD_TEXELS (texels per head: ceil(head_dim / 4), the head padded with zeros) are compiled in
// (src/model/ops/attention.cpp): loops over a head's texels unroll, and divisions are by constants.
uniform int u_pos0;    // absolute position of the run's first query
uniform int u_count;   // queries in the run
uniform int u_stride;  // scores rows per head

const float kMasked = -1.0e30;  // score of a key after the query (causal mask); exp() of it is 0

int scoreRow(int queryPos, int head) { return head * u_stride + queryPos - u_pos0; }
int lastQuery() { return u_pos0 + u_count - 1; }

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
    return maxLane(m);
}
