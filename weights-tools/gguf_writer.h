#pragma once
// gpt2-gguf's work: a Hugging Face GPT-2 checkpoint folder -> one GGUF file laid out as llama.cpp's
// converter writes architecture gpt2 (its tensor names, Conv1D weights transposed to [out, in], its
// metadata keys and the tokenizer's tokens and merges), with the weight matrices in the chosen type.
// Quantized as the GGUF specification defines the types: Q8_0 (d = max |x| / 127, q = round(x / d))
// and Q4_0 (d = the value of largest magnitude / -8, q = x / d + 8 rounded, at most 15); Q4_K and
// Q6_K from each block's range.
#include <string>

#include "format/model_config.h"

namespace gpt2 {

// F32 and F16 keep every matrix in that type, Q8_0 and Q4_0 quantize them, but for the position
// embedding (F32, as llama.cpp leaves it) and, in Q4_0 files, token_embd, which is also the output
// head (Q8_0, where llama.cpp takes Q6_K when rows allow it). LayerNorm parameters and biases are
// F32 in every file. For gpt2-tiny these give llama.cpp's own files bit for bit (F16: llama-quantize's;
// tests/format/gguf_writer_test.cpp).
// Q4_K_M follows llama.cpp's preset: Q4_K, but Q6_K for token_embd and for attn_qkv and ffn_down of
// the first and last eighth of the layers and every third layer between; tensors whose rows are no
// multiple of 256 (what K-quants need) take Q5_0 for Q4_K and Q8_0 for Q6_K, as llama.cpp does. The K-quants' block
// scales come from each block's range (llama.cpp searches for better ones), so the bytes differ from llama.cpp's.
enum class GgufFileType { F32, F16, Q8_0, Q4_0, Q4_K_M };
// "F32", "F16", "Q8_0", "Q4_0" or "Q4_K_M"; throws naming the accepted values.
GgufFileType parseGgufFileType(const std::string& name);

struct GgufWriteSummary {
    ModelConfig config;
    int tensors = 0;
    std::uint64_t bytes = 0;
};

// Reads the folder one tensor at a time; needs its vocab.json and merges.txt (a GGUF file carries
// its tokenizer).
GgufWriteSummary writeGguf(const std::string& inDir, const std::string& outFile, GgufFileType type);

}  // namespace gpt2
