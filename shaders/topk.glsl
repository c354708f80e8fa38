// The order of top-k candidates: larger logit first, the smaller token id first among equal logits.
// Candidate r is the best (logit, id) that comes strictly after candidate r - 1 in this order, so
// k rounds of "best after the previous one" list the top k without sorting the vocabulary.
const vec2 kNone = vec2(-3.0e38, 1.0e9);  // after every real candidate

bool comesBefore(vec2 a, vec2 b) { return a.x > b.x || (a.x == b.x && a.y < b.y); }
