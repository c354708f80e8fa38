#include "model/ops/matmul.h"

#include <algorithm>
#include <string>

#include "gl/shader_source.h"
#include "util/error.h"

namespace gpt2 {

int splitInstanceTexels(int texels, int splitTexels) {
    int n = std::min(splitTexels, texels);
    while (texels % n != 0) --n;
    return n;
}

Epilogue activationEpilogue(Activation activation) {
    switch (activation) {
        case Activation::GeluTanh: return Epilogue::GeluTanh;
        case Activation::GeluErf: return Epilogue::GeluErf;
        case Activation::Relu: return Epilogue::Relu;
    }
    return Epilogue::None;
}

bool canTakeInputFromVertex(const MatmulSpec& spec) {
    return spec.splitTexels > 0 &&
           splitInstanceTexels(spec.x->layout().texelsPerRow, spec.splitTexels) + 1 <= spec.varyingVectors;
}

bool readsRowPairs(const MatmulSpec& spec) {
    return spec.x && spec.x->format() == TexelFormat::HalfPairs && spec.rowsPerFragment >= 2 && !spec.inputFromVertex &&
           !spec.inputLayerNorm;
}

namespace {
void checkSpec(const std::vector<Texture*>& outputs, const MatmulSpec& spec) {
    if (!spec.x || !spec.weight) fail("matmul: needs an input and a weight");
    if (outputs.size() != 1 && outputs.size() != 3) fail("matmul: needs one or three outputs");
    const int inTexels = spec.x->layout().texelsPerRow;
    const int weightInRows = spec.transposedWeight ? spec.weight->layout().texelsPerRow * 4 : spec.weight->rows();
    if (weightInRows != inTexels * 4)
        fail("matmul into ", outputs[0]->name(), ": weight ", spec.weight->name(), " has ", weightInRows,
             " input rows, input ", spec.x->name(), " has ", inTexels * 4, " padded columns");
    const TexelFormat format = spec.weight->format();
    if ((format == TexelFormat::Int8Quads || format == TexelFormat::Int4Quads) != (spec.weightScale != nullptr))
        fail("matmul into ", outputs[0]->name(), ": weight ", spec.weight->name(),
             spec.weightScale ? " is not quantized but has scales" : " is quantized and needs its scales");
    if ((format == TexelFormat::Int4Quads || spec.weightOffset) && spec.weightBlockTexels <= 0)
        fail("matmul into ", outputs[0]->name(), ": weight ", spec.weight->name(),
             " has 4-bit codes or offsets, which only block-quantized weights have");
    if (spec.inputLayerNorm && spec.inputActivation != Epilogue::None)
        fail("matmul into ", outputs[0]->name(), ": an input LayerNorm and an input activation cannot be combined");
    if (spec.inputLayerNorm && !spec.inputLayerNorm->moments && !spec.inputFromVertex)
        fail("matmul into ", outputs[0]->name(),
             ": an input LayerNorm without row moments needs input from the vertex "
             "shader, which sums them once per instance");
    if (spec.inputFromVertex && !canTakeInputFromVertex(spec))
        fail("matmul into ", outputs[0]->name(), ": input from the vertex shader needs split-K of 1 to ",
             spec.varyingVectors - 1, " input texels per instance (", spec.varyingVectors,
             " varying vectors), got splitTexels ", spec.splitTexels);
    if (spec.rowsPerFragment < 1 || outputs.size() * spec.rowsPerFragment > 8 ||
        (spec.inputFromVertex && spec.rowsPerFragment > 1))
        fail("matmul into ", outputs[0]->name(), ": ", spec.rowsPerFragment, " rows per fragment for ", outputs.size(),
             " outputs; at most 8 render targets in all, and one row with input from the vertex shader");
    if (spec.splitTexels > 0 && spec.activation != Epilogue::None)
        fail("matmul into ", outputs[0]->name(),
             ": a split-K matmul cannot apply an activation to its sums; "
             "apply it as the consumer's inputActivation");
}

std::string composed(std::initializer_list<std::string> parts) {
    std::string out;
    for (const std::string& part : parts) out += (out.empty() ? "" : std::string(1, kShaderPartSeparator)) + part;
    return out;
}
}  // namespace

Pass matmulPass(ProgramCache& programs, std::vector<Texture*> outputs, const MatmulSpec& spec) {
    checkSpec(outputs, spec);
    const int inTexels = spec.x->layout().texelsPerRow;
    const int instanceTexels = spec.splitTexels > 0 ? splitInstanceTexels(inTexels, spec.splitTexels) : inTexels;
    // The variant: one include of each kind before matmul.frag (its header lists them).
    const std::string weights =
        spec.weightBlockTexels > 0
            ? "matmul_weight_blocks.glsl"
            : composed({spec.transposedWeight ? "matmul_weight_transposed.glsl" : "matmul_weight.glsl",
                        spec.weightScale ? "matmul_weight_scale.glsl" : "matmul_weight_unscaled.glsl"});
    const std::string transform = spec.inputLayerNorm ? "matmul_input_norm.glsl" : "matmul_input_activation.glsl";
    const std::string fragment = composed(
        {spec.inputFromVertex ? "matmul_input_vertex.glsl" : composed({transform, "matmul_input_fragment.glsl"}),
         spec.splitTexels > 0 ? "matmul_split_k.glsl" : "matmul_whole_k.glsl", weights, "matmul_epilogue.glsl",
         "matmul.frag"});
    const std::string vertex =
        spec.inputFromVertex ? composed({transform, "matmul_row.vert"}) : ProgramCache::kFullscreenVertex;

    std::string defines = "#define PARTS " + std::to_string(outputs.size()) + "\n";
    defines += "#define ROWS " + std::to_string(spec.rowsPerFragment) + "\n";
    defines += "#define ACTIVATION " + std::to_string(int(spec.activation)) + "\n";
    defines += "#define INPUT_ACTIVATION " + std::to_string(int(spec.inputActivation)) + "\n";
    if (spec.splitTexels > 0) defines += "#define SPLIT_TEXELS " + std::to_string(instanceTexels) + "\n";
    if (spec.bias) defines += "#define BIAS 1\n";
    if (spec.residual) defines += "#define RESIDUAL 1\n";
    if (spec.addend) defines += "#define ADDEND 1\n";
    if (spec.columnMask) defines += "#define COLUMN_MASK 1\n";
    if (readsRowPairs(spec)) defines += "#define PAIRED_ROWS 1\n";
    if (spec.weightBlockTexels > 0) {
        defines += "#define BLOCK_TEXELS " + std::to_string(spec.weightBlockTexels) + "\n";
        if (spec.transposedWeight) defines += "#define TRANSPOSED_WEIGHT 1\n";
        if (spec.weightOffset) defines += "#define BLOCK_OFFSETS 1\n";
    }

    PassInputs inputs{{"u_x", spec.x}, {"u_w", spec.weight}};
    if (spec.weightScale) inputs.push_back({"u_w_scale", spec.weightScale});
    if (spec.weightOffset) inputs.push_back({"u_w_offset", spec.weightOffset});
    if (const auto& ln = spec.inputLayerNorm) {
        inputs.insert(inputs.end(), {{"u_gamma", ln->gamma}, {"u_beta", ln->beta}});
        if (ln->moments) {
            inputs.push_back({"u_moments", ln->moments});
        } else {
            defines += "#define MOMENTS_HERE 1\n";
        }
    }
    if (spec.bias) inputs.push_back({"u_bias", spec.bias});
    if (spec.residual) inputs.push_back({"u_residual", spec.residual});
    if (spec.addend) inputs.push_back({"u_addend", spec.addend});
    if (spec.columnMask) inputs.push_back({"u_column_mask", spec.columnMask});
    Pass pass(programs, fragment, defines, outputs, inputs, inTexels / instanceTexels, vertex);
    pass.set("u_in_row_offset", spec.inRowOffset).set("u_part_texels", outputs[0]->layout().texelsPerRow);
    pass.set("u_first_part", spec.firstPart);
    if (const auto& ln = spec.inputLayerNorm) pass.set("u_cols", ln->cols).set("u_eps", ln->eps);
    if (spec.inputFromVertex) pass.limitRowsPerRun(1);
    if (spec.rowsPerFragment > 1) pass.writeRowGroups(spec.rowsPerFragment);
    return pass;
}

}  // namespace gpt2
