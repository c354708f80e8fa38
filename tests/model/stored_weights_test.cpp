// Float checkpoint tensors go to the GPU as their file stores them (ModelWeights::upload from bytes):
// F32 values for fp16 row pairs are rounded on the GPU (shaders/half_pairs_from_stream.frag). They
// must be the values of round-to-nearest-even, ties, subnormals and the largest finite fp16 included,
// as the CPU's conversion gives them. Read back through the embedding: block 0 adds nothing (its
// output projections and biases are zero) and wpe is zero, so hidden state 0 is wte's rows.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "engine/engine.h"
#include "format/gguf.h"
#include "format/gguf_gpt2.h"
#include "format/safetensors_writer.h"
#include "model/engine_matrices.h"
#include "support/fixture.h"
#include "support/gl_test_environment.h"
#include "support/model_fixture.h"
#include "support/random_checkpoint.h"
#include "util/error.h"
#include "util/half.h"
#include "weights-tools/gguf_writer.h"

namespace gpt2 {
namespace {

constexpr int kVocab = 64, kEmbd = 64;

// wte's values: halfway between neighbouring fp16 values (both parities, several exponents), fp16
// subnormals and the halves between them, values near the largest fp16, fp32 values too small for
// fp16, and random ones; every one also negated.
std::vector<float> craftedValues() {
    std::vector<float> v;
    for (int e = -14; e <= 15; e += 3)
        for (int j = 0; j < 8; ++j) v.push_back(std::ldexp(1.0f + float(2 * j + 1) / 2048.0f, e));
    for (int m = 1; m < 64; ++m) v.push_back(std::ldexp(float(m), -25));
    for (float x : {65504.0f, 65519.0f, 65519.996f, 6.0e-8f, 2.9e-8f, 3.0e-8f, 1.0e-30f}) v.push_back(x);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    while (v.size() < std::size_t(kVocab * kEmbd / 2)) v.push_back(normal(rng));
    const std::size_t half = v.size();
    for (std::size_t i = 0; i < half; ++i) v.push_back(-v[i]);
    return v;
}

std::string checkpointWith(const std::vector<float>& wte, DType dtype) {
    const ModelConfig config = testing::shapeConfig(kVocab, kVocab, kEmbd, 1, 4, kEmbd);
    const std::string dir = testing::makeTempDir("gpt2-stored-weights");
    std::ofstream(dir + "/config.json") << modelConfigToJson(config);
    const std::vector<MatrixSpec> specs = engineMatrices(config);
    std::vector<TensorToWrite> tensors;
    for (const MatrixSpec& spec : specs) tensors.push_back({"transformer." + spec.name, dtype, spec.sourceShape});
    writeSafetensors(dir + "/model.safetensors", tensors, [&](std::size_t i) {
        const std::string& name = specs[i].name;
        if (name == "wte.weight") return wte;
        std::int64_t n = 1;
        for (const std::int64_t d : specs[i].sourceShape) n *= d;
        const bool gain = name.find("ln_") != std::string::npos && name.find(".weight") != std::string::npos;
        return std::vector<float>(std::size_t(n), gain ? 1.0f : 0.0f);
    });
    return dir;
}

TEST(StoredWeights, F32ValuesBecomeTheNearestFp16OnTheGpuAsOnTheCpu) {
    testing::ensureGlContext();
    const std::vector<float> wte = craftedValues();
    const std::string dir = checkpointWith(wte, DType::F32);
    std::vector<int> ids(kVocab);
    for (int i = 0; i < kVocab; ++i) ids[std::size_t(i)] = i;
    for (const int pairs : {1, 0}) {
        ModelOptions options{TexelFormat::Float16};
        options.halfPairs = pairs;
        Engine engine(dir, options);
        const std::vector<float> rows = engine.hiddenStates(ids, 0);
        ASSERT_EQ(rows.size(), wte.size());
        int differ = 0;
        for (std::size_t i = 0; i < wte.size(); ++i)
            if (!(rows[i] == roundToHalf(wte[i])) && ++differ <= 5)
                ADD_FAILURE() << (pairs ? "row pairs" : "RGBA16F") << ": wte value " << i << " " << wte[i] << " became "
                              << rows[i] << ", its nearest fp16 is " << roundToHalf(wte[i]);
        EXPECT_EQ(differ, 0) << (pairs ? "row pairs" : "RGBA16F");
    }
    std::filesystem::remove_all(dir);
}

// F16 values are paired on the GPU from their bits (an integer staging texture), so each comes back
// as it is stored: every fp16 subnormal, the largest values and random ones, and their negations
// (-0 reads back as +0: the embedding adds wpe's zeros).
TEST(StoredWeights, F16ValuesArePairedOnTheGpuBitForBit) {
    testing::ensureGlContext();
    std::vector<float> wte;
    for (std::uint32_t bits = 0; bits < 0x400; ++bits) wte.push_back(halfToFloat(std::uint16_t(bits)));
    for (const std::uint16_t bits : {0x0400, 0x0401, 0x3BFF, 0x3C00, 0x3C01, 0x7BFE, 0x7BFF})
        wte.push_back(halfToFloat(bits));
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> finite(0, 0x7BFF);
    while (wte.size() < std::size_t(kVocab * kEmbd / 2)) wte.push_back(halfToFloat(std::uint16_t(finite(rng))));
    const std::size_t half = wte.size();
    for (std::size_t i = 0; i < half; ++i) wte.push_back(-wte[i]);
    const std::string dir = checkpointWith(wte, DType::F16);
    std::vector<int> ids(kVocab);
    for (int i = 0; i < kVocab; ++i) ids[std::size_t(i)] = i;
    ModelOptions options{TexelFormat::Float16};
    options.halfPairs = 1;
    Engine engine(dir, options);
    const std::vector<float> rows = engine.hiddenStates(ids, 0);
    ASSERT_EQ(rows.size(), wte.size());
    int differ = 0;
    for (std::size_t i = 0; i < wte.size(); ++i)
        if (!(rows[i] == wte[i]) && ++differ <= 5)
            ADD_FAILURE() << "wte value " << i << " " << wte[i] << " became " << rows[i];
    EXPECT_EQ(differ, 0);
    std::filesystem::remove_all(dir);
}

// GGUF keeps a Conv1D weight transposed ([out, in]); its F32 and F16 bytes go to the GPU as they are and
// are transposed there (shaders/rows_from_stored_columns.frag) into each weight format. The same
// weights from a checkpoint folder, as Hugging Face orients them, must give the same logits bit for
// bit: gpt2-tiny's F32 checkpoint against its GGUF F32 file in every format, and against its GGUF
// F16 file (gpt2-gguf rounds as floatToHalf does) in the formats that keep fp16 values.
TEST(StoredWeights, TransposedGgufFloatsReachEveryWeightFormatAsTheCheckpointsDo) {
    namespace fs = std::filesystem;
    testing::ensureGlContext();
    const fs::path dir = testing::tinyWithTokenizer("gpt2-transposed-gguf");
    writeGguf(dir.string(), (dir / "f32.gguf").string(), GgufFileType::F32);
    writeGguf(dir.string(), (dir / "f16.gguf").string(), GgufFileType::F16);
    const std::vector<int> ids = {464, 3290, 373, 257, 922, 13, 198, 40};
    const auto logits = [&](const std::string& path, TexelFormat weights, int pairs) {
        ModelOptions options{weights};
        options.halfPairs = pairs;
        Engine engine(path, options);
        engine.prefill(ids);
        return engine.logits();
    };
    struct Case {
        const char* name;
        TexelFormat weights;
        int pairs;
        bool fromHalf;  // the F16 file gives the folder's values in this format
    };
    for (const Case& c :
         {Case{"fp32", TexelFormat::Float32, -1, false}, Case{"fp16 row pairs", TexelFormat::Float16, 1, true},
          Case{"RGBA16F", TexelFormat::Float16, 0, true}, Case{"int8", TexelFormat::Int8Quads, -1, false},
          Case{"int4", TexelFormat::Int4Quads, -1, true}}) {
        const std::vector<float> want = logits(dir.string(), c.weights, c.pairs);
        for (const char* file : {"f32.gguf", "f16.gguf"}) {
            if (std::string(file) == "f16.gguf" && !c.fromHalf) continue;
            const std::vector<float> got = logits((dir / file).string(), c.weights, c.pairs);
            ASSERT_EQ(got.size(), want.size());
            int differ = 0;
            for (std::size_t i = 0; i < want.size(); ++i) differ += !(got[i] == want[i]);
            EXPECT_EQ(differ, 0) << c.name << ", " << file << ": " << differ
                                 << " logits differ from the folder's, max |d| " << testing::maxAbsDiff(got, want);
        }
    }
    // A NaN in a transposed tensor is named by its index in the Hugging Face shape, [in, out]: stored
    // output 2's input 5 of h.0.mlp.c_fc.weight is element 5 * out + 2.
    const std::string path = (dir / "f16.gguf").string();
    std::int64_t in = 0, out = 0;
    std::uint64_t at = 0;
    {
        const GgufFile gguf(path);
        const GgufTensor& fc = *gguf.header().tensor(ggufName("h.0.mlp.c_fc.weight"));
        in = fc.dims[0];
        out = fc.dims[1];
        at = gguf.header().dataOffset + fc.begin + 2 * std::uint64_t(2 * in + 5);
    }
    {
        std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
        file.seekp(std::streamoff(at));
        const char nan[2] = {0x00, 0x7E};
        file.write(nan, 2);
    }
    try {
        Engine engine(path, ModelOptions{TexelFormat::Float16});
        ADD_FAILURE() << "loaded a file holding a NaN";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("tensor h.0.mlp.c_fc.weight holds a non-finite value (nan) at element " +
                                             std::to_string(5 * out + 2)),
                  std::string::npos)
            << e.what();
    }
    fs::remove_all(dir);
}

}  // namespace
}  // namespace gpt2
