// Loops over a fragment's rows, parts and input texels, written out by the preprocessor: EACH_ROW(F, x)
// is F(x, 0) F(x, 1) ... F(x, ROWS - 1), and EACH_PART(F, x) the same over PARTS. Written out, every
// index into a per-row array is a constant. SwiftShader keeps an array indexed by a loop variable in
// memory and runs such a loop lane by lane, and llvmpipe loses time the same way (the timings:
// docs/benchmarks/journal.md, "Loops written out for software renderers"). The two macros list
// their terms separately so that one can expand inside the other (a macro never expands inside
// its own expansion).
#if ROWS == 1
#define EACH_ROW(F, x) F(x, 0)
#elif ROWS == 2
#define EACH_ROW(F, x) F(x, 0) F(x, 1)
#elif ROWS == 4
#define EACH_ROW(F, x) F(x, 0) F(x, 1) F(x, 2) F(x, 3)
#elif ROWS == 8
#define EACH_ROW(F, x) F(x, 0) F(x, 1) F(x, 2) F(x, 3) F(x, 4) F(x, 5) F(x, 6) F(x, 7)
#else
#error ROWS must be 1, 2, 4 or 8
#endif

// F(x, s) for the even rows s, each the first of a pair (ROWS of at least 2).
#if ROWS == 2
#define EACH_ROW_PAIR(F, x) F(x, 0)
#elif ROWS == 4
#define EACH_ROW_PAIR(F, x) F(x, 0) F(x, 2)
#elif ROWS == 8
#define EACH_ROW_PAIR(F, x) F(x, 0) F(x, 2) F(x, 4) F(x, 6)
#endif

// F(o), F(o + 1), ..., F(o + n - 1) for n = 1, 2, 4, 8, 16 and 32: a loop of any constant count below
// 64 is written out as the sum of these (matmul.frag).
#define TEXELS_1(F, o) F(o)
#define TEXELS_2(F, o) TEXELS_1(F, o) TEXELS_1(F, o + 1)
#define TEXELS_4(F, o) TEXELS_2(F, o) TEXELS_2(F, o + 2)
#define TEXELS_8(F, o) TEXELS_4(F, o) TEXELS_4(F, o + 4)
#define TEXELS_16(F, o) TEXELS_8(F, o) TEXELS_8(F, o + 8)
#define TEXELS_32(F, o) TEXELS_16(F, o) TEXELS_16(F, o + 16)

#ifdef PARTS
#if PARTS == 1
#define EACH_PART(F, x) F(x, 0)
#elif PARTS == 3
#define EACH_PART(F, x) F(x, 0) F(x, 1) F(x, 2)
#else
#error PARTS must be 1 or 3
#endif
// F(p, s) for every part p and row s.
#define EACH_OUTPUT(F) EACH_PART(EACH_ROW, F)
#endif
