// What sampling does to a logit before the search (Hugging Face's order: repetition penalty, then
// temperature), and the random numbers of a draw: a hash of (seed, draw, token id), so a draw needs
// no state and gives the same numbers on every GPU, in any order of fragments. The engine's CPU
// sampler (src/engine/sampling.cpp, drawUniform) computes the same numbers.

// A 32-bit integer hash with full avalanche (two multiply-xorshift rounds).
uint mixBits(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

uint chainBits(uint h, uint x) { return mixBits(h ^ (x + 0x9e3779b9u)); }

uint drawBits(ivec2 seed, int draw, int id) {
    uint h = chainBits(chainBits(chainBits(0u, uint(seed.x)), uint(seed.y)), uint(draw));
    return chainBits(h, uint(id));
}

// Uniform in (0, 1) for (seed, draw, id): 23 random bits, centred in their interval. id -1 is the
// draw's own number (the pick among candidates); ids >= 0 are each token's (Gumbel noise).
float drawUniform(ivec2 seed, int draw, int id) { return (float(drawBits(seed, draw, id) >> 9) + 0.5) * (1.0 / 8388608.0); }

// Gumbel(0, 1) noise, -log(E) for E = -log(u) exponential: the argmax of logit / T + noise over tokens
// is a draw from softmax(logit / T). The smallest E win; near u = 1 a GPU's log has no digits left
// for them, so there E comes from 1 - u (exact) by its series.
float gumbel(ivec2 seed, int draw, int id) {
    float m = float(drawBits(seed, draw, id) >> 9);
    float below = (8388608.0 - m - 0.5) * (1.0 / 8388608.0);  // 1 - u
    float e = below < 1.0 / 1024.0 ? below * (1.0 + below * (0.5 + below / 3.0)) : -log((m + 0.5) * (1.0 / 8388608.0));
    return -log(e);
}

// Hugging Face's repetition penalty on a token already in the sequence: a positive logit divided by
// it, a negative one multiplied.
float penalized(float logit, float penalty) { return logit > 0.0 ? logit / penalty : logit * penalty; }
