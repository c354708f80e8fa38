// The order of top-k candidates: larger key first, the smaller token id first among equal keys.
// Candidates are (key, id) pairs; kNone comes after every real candidate.
const vec2 kNone = vec2(-3.0e38, 1.0e9);

bool comesBefore(vec2 a, vec2 b) { return a.x > b.x || (a.x == b.x && a.y < b.y); }

// The best candidates seen so far, best first: the first `wanted` of them are kept (the pass defines
// MAX_CANDIDATES: 1 for a search of the single best, which then stays in registers: keep() and
// keptAt() index it only with constants there, since an index known only as the shader runs puts
// even a one-element array in memory, and a greedy token's block pass took 134 µs on an H200 instead
// of 71). Globals, not a struct passed inout: llvmpipe lost the writes to an array inside one. The
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

// keep(c, wanted) inserts `c` (which enters) into the first `wanted`, dropping the one that falls out.
// heapKeep(c, wanted) is the merge's way (topk_merge.frag): a heap of the best `wanted` with the worst
// at its root, kept[0], which is then the cutoff and all a merge fragment writes. A candidate that
// enters takes about log2(wanted) steps where keep() shifts about wanted / 2 entries, each step an
// access to memory (the indices are known only as the shader runs): with keep(), merging the demo's
// 40 candidates took 0.43 ms a token on an H200, with this heap 0.23 (docs/benchmarks/journal.md,
// runs AU and AW). keptAt(rank) reads kept candidate `rank` (below MAX_CANDIDATES).
#if MAX_CANDIDATES == 1
void keep(vec2 c, int wanted) {
    kept[0] = c;
    keptCount = 1;
    cutoff = c;
}

void heapKeep(vec2 c, int wanted) { keep(c, wanted); }

vec2 keptAt(int rank) { return rank == 0 ? kept[0] : kNone; }
#else
#if MAX_CANDIDATES > 64
#error a heap of more than 64 candidates needs more than the 6 levels heapKeep walks
#endif
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

// Loops of at most 6 levels, with breaks: llvmpipe drew wrong tokens from the same heap written with
// while loops.
void heapKeep(vec2 c, int wanted) {
    int i = 0;
    if (keptCount < wanted) {
        // Up from a new leaf while its parent is better (each parent is worse than its children).
        i = keptCount;
        keptCount += 1;
        for (int level = 0; level < 6; ++level) {
            if (i == 0) break;
            int parent = (i - 1) / 2;
            vec2 p = kept[parent];
            if (!comesBefore(p, c)) break;
            kept[i] = p;
            i = parent;
        }
    } else {
        // In place of the worst, down while the worse child is worse than it.
        for (int level = 0; level < 6; ++level) {
            int child = 2 * i + 1;
            if (child >= wanted) break;
            vec2 worse = kept[child];
            if (child + 1 < wanted) {
                vec2 right = kept[child + 1];
                if (comesBefore(worse, right)) {
                    worse = right;
                    child += 1;
                }
            }
            if (!comesBefore(c, worse)) break;
            kept[i] = worse;
            i = child;
        }
    }
    kept[i] = c;
    cutoff = kept[0];
}

vec2 keptAt(int rank) { return kept[rank]; }
#endif

// (max m, Σ exp(x - m)) pairs of log-sum-exp partials, combined.
vec2 combineLogSumExp(vec2 a, vec2 b) {
    float m = max(a.x, b.x);
    return vec2(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}
