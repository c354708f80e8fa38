#include "gl/pass.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "gl/capabilities.h"
#include "gl/draw_ranges.h"
#include "util/error.h"

namespace gpt2 {

Pass::Pass(ProgramCache& programs, const std::string& shader, std::string defines, std::vector<Texture*> outputs,
           const PassInputs& inputs, int instances, const std::string& vertexShader)
    : instances_(instances), outputs_(std::move(outputs)) {
    if (outputs_.empty()) fail("pass ", shader, ": needs an output texture");
    if (instances_ < 1) fail("pass ", shader, ": instances must be at least 1, got ", instances_);
    if (instances_ > 1 && !outputs_[0]->layout().rowsAreWholeLines())
        fail("pass ", shader, ": ", instances_, " blended instances need output rows of whole lines; ",
             outputs_[0]->name(), " shares lines between rows");
    for (const Texture* t : outputs_) {
        const auto& a = t->layout();
        const auto& b = outputs_[0]->layout();
        if (a.rows != b.rows || a.texelsPerRow != b.texelsPerRow || a.width != b.width || a.pages != b.pages ||
            a.interleave != b.interleave)
            fail("pass ", shader, ": output ", t->name(), " has a different layout from ", outputs_[0]->name());
    }
    // RGBA32F and RGBA16F take one row a texel, written as is (and blended) by any pass.
    const auto plain = [](const Texture* t) {
        return t->format() == TexelFormat::Float32 || t->format() == TexelFormat::Float16;
    };
    if (!plain(outputs_[0])) {
        if (outputs_.size() > 1 || instances_ > 1)
            fail("pass ", shader, ": an output of several rows a texel (", outputs_[0]->name(),
                 ") takes one render target and no blended instances");
        defines +=
            outputs_[0]->format() == TexelFormat::HalfPairs ? "#define PAIR_OUTPUT 1\n" : "#define QUAD_OUTPUT 1\n";
    }
    framebuffers_.resize(std::size_t(outputs_[0]->layout().pages));
    // Inputs are declared here, where their formats are known: the shaders use them by name.
    for (const auto& [name, texture] : inputs) {
        const glm::ivec4 l = texture->layout().uniform();
        const char* sampler = formatInfo(texture->format()).sampler;
        defines += std::string("uniform highp ") + sampler + " " + name + ";\n";
        defines += "#define " + name + "_layout ivec4(" + std::to_string(l.x) + ", " + std::to_string(l.y) + ", " +
                   std::to_string(l.z) + ", " + std::to_string(l.w) + ")\n";
        // 4-bit quads and fp16 bits share usampler2DArray with fp16 row pairs: the shaders tell them
        // apart by these.
        if (texture->format() == TexelFormat::Int4Quads) defines += "#define " + name + "_nibbles 1\n";
        if (texture->format() == TexelFormat::Bits) defines += "#define " + name + "_bits 1\n";
    }
    program_ = &programs.get(shader, defines, vertexShader);
    declaredInputs_ = inputs;
}

void Pass::bind() {
    Program& program = *program_;
    outLayoutLocation_ = program.uniform("u_out_layout");
    rowsLocation_ = program.uniform("u_rows");
    pageLocation_ = program.uniform("u_out_page");
    for (const auto& [name, texture] : declaredInputs_)
        if (const int unit = program.samplerUnit(name); unit != -1) inputs_.push_back({unit, texture});
    declaredInputs_.clear();
    for (Uniform& u : uniforms_) u.location = program.uniform(u.name);
    bound_ = true;
}

Pass::Uniform& Pass::slot(const std::string& name, UniformKind kind) {
    for (auto& u : uniforms_)
        if (u.name == name) return u;
    uniforms_.push_back({name, bound_ ? program_->uniform(name) : -1, kind});
    return uniforms_.back();
}

Pass& Pass::set(const std::string& name, int value) {
    slot(name, UniformKind::Int).ints.x = value;
    return *this;
}

Pass& Pass::set(const std::string& name, float value) {
    slot(name, UniformKind::Float).real = value;
    return *this;
}

Pass& Pass::set(const std::string& name, glm::ivec2 value) {
    auto& u = slot(name, UniformKind::Ivec2);
    u.ints.x = value.x;
    u.ints.y = value.y;
    return *this;
}

void Pass::writeRowGroups(int rows) {
    const int interleave = outputs_[0]->layout().interleave;
    if (rows < 1 || interleave % rows != 0)
        fail("pass ", program_->label(), ": groups of ", rows,
             " rows need outputs with rows interleaved over a multiple of ", rows, " pages; ", outputs_[0]->name(),
             " interleaves ", interleave);
    groupRows_ = rows;
}

const Framebuffer& Pass::framebuffer(int layer) {
    if (outputs_.size() == 1 && groupRows_ == 1) return outputs_[0]->framebuffer(layer);
    Framebuffer& fb = framebuffers_[std::size_t(layer)];
    if (!fb.valid()) {
        std::vector<Framebuffer::Attachment> targets;
        for (const Texture* t : outputs_)
            for (int s = 0; s < groupRows_; ++s)
                targets.push_back({t->id(), layer + s, formatInfo(t->format()).internalFormat});
        fb = Framebuffer(targets, program_->label().c_str());
    }
    return fb;
}

void Pass::checkRows(int rowBegin, int rowEnd) const {
    if (rowBegin < 0 || rowEnd > outputs_[0]->rows() || rowBegin >= rowEnd)
        fail("pass ", program_->label(), ": rows [", rowBegin, ", ", rowEnd, ") outside its output's ",
             outputs_[0]->rows(), " rows");
    if (maxRowsPerRun_ > 0 && rowEnd - rowBegin > maxRowsPerRun_)
        fail("pass ", program_->label(), ": runs at most ", maxRowsPerRun_, " rows at a time, asked for ",
             rowEnd - rowBegin);
    if (rowBegin % groupRows_ != 0 || rowEnd % groupRows_ != 0)
        fail("pass ", program_->label(), ": writes groups of ", groupRows_, " rows, asked for rows [", rowBegin, ", ",
             rowEnd, ")");
}

void Pass::run(int rowBegin, int rowEnd) {
    checkRows(rowBegin, rowEnd);
    const TensorLayout& out = outputs_[0]->layout();
    PassProfiler& profiler = PassProfiler::instance();
    std::optional<PassProfiler::Timing> timing;
    if (profiler.timing()) timing = profiler.start();
    if (!bound_) bind();
    Program& program = *program_;
    glUseProgram(program.id());
    for (const auto& [unit, texture] : inputs_) {
        glActiveTexture(GLenum(GL_TEXTURE0 + unit));
        glBindTexture(GL_TEXTURE_2D_ARRAY, texture->id());
    }
    for (const auto& u : uniforms_) {
        switch (u.kind) {
            case UniformKind::Int: program.setInt(u.location, u.ints.x); break;
            case UniformKind::Float: program.setFloat(u.location, u.real); break;
            case UniformKind::Ivec2: program.setIvec2(u.location, u.ints.x, u.ints.y); break;
        }
    }
    const glm::ivec4 layout = out.uniform();
    program.setIvec4(outLayoutLocation_, layout.x, layout.y, layout.z, layout.w);
    program.setIvec2(rowsLocation_, rowBegin, rowEnd);

    glEnable(GL_SCISSOR_TEST);
    glViewport(0, 0, out.width, out.height);
    if (instances_ > 1) {
        glEnable(GL_BLEND);
        glBlendFunc(GL_ONE, GL_ONE);
    }
    // Row pairs: the draws cover the pairs that hold the rows (row_output.glsl).
    const int perTexel = rowsPerTexel(outputs_[0]->format());
    int draws = 0, lastLayer = 0;
    forEachDrawRange(out, rowBegin / perTexel, (rowEnd + perTexel - 1) / perTexel, groupRows_, [&](DrawRange draw) {
        const Framebuffer& target = framebuffer(draw.layer);
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target.id());
        glScissor(0, draw.line0, out.width, draw.line1 - draw.line0 + 1);
        program.setInt(pageLocation_, draw.layer);
        if (instances_ == 1) {
            glDrawArrays(GL_TRIANGLES, 0, 3);
        } else {
            // Rows are whole lines, so the scissored clear touches exactly the rows drawn (clears
            // do not blend).
            const float zero[4] = {0, 0, 0, 0};
            for (int i = 0; i < target.attachments(); ++i) glClearBufferfv(GL_COLOR, GLint(i), zero);
            glDrawArraysInstanced(GL_TRIANGLES, 0, 3, instances_);
        }
        ++draws;
        lastLayer = draw.layer;
    });
    if (instances_ > 1) glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    profiler.countDraws(draws);
    if (timing)
        profiler.finish(std::move(*timing), program.label() + " -> " + outputs_[0]->name(), [&] {
            GLuint texel[4];  // 4 floats, or 4 channels of row pairs: a wait for the result either way
            const bool pairs = perTexel > 1;
            glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer(lastLayer).id());
            glReadPixels(0, 0, 1, 1, pairs ? GL_RGBA_INTEGER : GL_RGBA, pairs ? GL_UNSIGNED_INT : GL_FLOAT, texel);
            glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        });
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
}

}  // namespace gpt2
