// The order of top-k candidates: larger key first, the smaller token id first among equal keys.
// Candidates are (key, id) pairs; kNone comes after every real candidate.
const vec2 kNone = vec2(-3.0e38, 1.0e9);

bool comesBefore(vec2 a, vec2 b) { return a.x > b.x || (a.x == b.x && a.y < b.y); }

// The best candidates seen so far, best first: the first `wanted` of them are kept (the pass defines
// MAX_CANDIDATES: 1 for a search of the single best, which then stays in registers: keep() and
// keptAt() index it only with constants there, since an index known only as the shader runs puts
// even a one-element array in memory, and a greedy token's block pass took 71 µs on an H200 instead
// of 41). Globals, not a struct passed inout: llvmpipe lost the writes to an array inside one. The
// last kept one is also held in `cutoff`, so that the test every candidate takes reads a register,
// not the array.
vec2 kept[MAX_CANDIDATES];
int keptCount = 0;
vec2 cutoff = kNone;

void keepNone() {
    keptCount = 0;
    cutoff = kNone;
    for (int i = 0; i < MAX_CANDIDATES; ++i) kept[i] = kNone;
}

// Whether `c` enters the first `wanted`.
bool enters(vec2 c, int wanted) { return keptCount < wanted || comesBefore(c, cutoff); }

// Inserts `c` (which enters) into the first `wanted`, dropping the one that falls out.
#if MAX_CANDIDATES == 1
void keep(vec2 c, int wanted) {
    kept[0] = c;
    keptCount = 1;
    cutoff = c;
}
#else
void keep(vec2 c, int wanted) {
    int i = min(keptCount, wanted - 1);
    for (; i > 0; --i) {
        if (!comesBefore(c, kept[i - 1])) break;
        kept[i] = kept[i - 1];
    }
    kept[i] = c;
    keptCount = min(keptCount + 1, wanted);
    cutoff = kept[wanted - 1];
}
#endif

// Kept candidate `rank` (below MAX_CANDIDATES).
#if MAX_CANDIDATES == 1
vec2 keptAt(int rank) { return rank == 0 ? kept[0] : kNone; }
#else
vec2 keptAt(int rank) { return kept[rank]; }
#endif

// (max m, Σ exp(x - m)) pairs of log-sum-exp partials, combined.
vec2 combineLogSumExp(vec2 a, vec2 b) {
    float m = max(a.x, b.x);
    return vec2(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}
