#include "gl/pass.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "gl/capabilities.h"
#include "util/error.h"

// EXT_disjoint_timer_query (GLES) and EXT_disjoint_timer_query_webgl2 share these enums.
#ifndef GL_TIME_ELAPSED_EXT
#define GL_TIME_ELAPSED_EXT 0x88BF
#endif
#ifndef GL_GPU_DISJOINT_EXT
#define GL_GPU_DISJOINT_EXT 0x8FBB
#endif

namespace gpt2 {
namespace {
long long g_draws = 0;
PassProfiling g_profiling = PassProfiling::Off;
std::string g_phase;
struct PendingTiming {
    std::string phase, key;
    GlObject query;
};
std::vector<PendingTiming> g_pending;  // timer queries not read yet
std::map<std::string, std::map<std::string, double>> g_profile;

#ifdef __EMSCRIPTEN__
constexpr const char* kTimerExtension = "EXT_disjoint_timer_query_webgl2";
#else
constexpr const char* kTimerExtension = "EXT_disjoint_timer_query";
#endif
}  // namespace

long long passDraws() { return g_draws; }

bool gpuTimersAvailable() { return hasGlExtension(kTimerExtension); }

bool gpuTimerResultsWaitForTheTask() {
#ifdef __EMSCRIPTEN__
    return true;
#else
    return false;
#endif
}

void setPassProfiling(PassProfiling mode, const std::string& phase) {
    if (mode == PassProfiling::GpuTimers && g_profiling != PassProfiling::GpuTimers) {
        if (!gpuTimersAvailable()) fail("profile: this context has no GPU timer queries (", kTimerExtension, ")");
        GLint disjoint = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);  // reading it clears it
    }
    g_profiling = mode;
    g_phase = phase;
}

bool passProfileReady() {
    // Results arrive in the order the queries were issued.
    if (g_pending.empty()) return true;
    GLuint available = 0;
    glGetQueryObjectuiv(g_pending.back().query.get(), GL_QUERY_RESULT_AVAILABLE, &available);
    return available != 0;
}

std::map<std::string, std::map<std::string, double>> takePassProfile() {
    for (PendingTiming& t : g_pending) {
        GLuint nanoseconds = 0;  // 32 bits: up to 4.2 s per pass
        glGetQueryObjectuiv(t.query.get(), GL_QUERY_RESULT, &nanoseconds);
        g_profile[t.phase][t.key] += nanoseconds * 1e-6;
    }
    const bool timed = !g_pending.empty();
    g_pending.clear();
    if (timed) {
        GLint disjoint = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
        if (disjoint) {
            g_profile.clear();
            fail("profile: the GPU timer queries were disjoint (a clock change or GPU reset); run it again");
        }
    }
    return std::exchange(g_profile, {});
}

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
        if (t->format() != TexelFormat::Float32 && t->format() != TexelFormat::HalfPairs)
            fail("pass ", shader, ": output ", t->name(), " must be RGBA32F or fp16 row pairs");
    }
    if (outputs_[0]->format() == TexelFormat::HalfPairs) {
        if (outputs_.size() > 1 || instances_ > 1)
            fail("pass ", shader, ": an output of fp16 row pairs (", outputs_[0]->name(),
                 ") takes one render target and no blended instances");
        defines += "#define PAIR_OUTPUT 1\n";
    }
    framebuffers_.resize(std::size_t(outputs_[0]->layout().pages));
    // Inputs are declared here, where their formats are known: the shaders use them by name.
    for (const auto& [name, texture] : inputs) {
        const glm::ivec4 l = texture->layout().uniform();
        const char* sampler = formatInfo(texture->format()).sampler;
        defines += std::string("uniform highp ") + sampler + " " + name + ";\n";
        defines += "#define " + name + "_layout ivec4(" + std::to_string(l.x) + ", " + std::to_string(l.y) + ", " +
                   std::to_string(l.z) + ", " + std::to_string(l.w) + ")\n";
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
            for (int s = 0; s < groupRows_; ++s) targets.push_back({t->id(), layer + s});
        fb = Framebuffer(targets, program_->label().c_str());
    }
    return fb;
}

namespace {
int floorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceilDiv(int a, int b) { return -floorDiv(-a, b); }
}  // namespace

void Pass::run(int rowBegin, int rowEnd) {
    const TensorLayout& out = outputs_[0]->layout();
    if (rowBegin < 0 || rowEnd > outputs_[0]->rows() || rowBegin >= rowEnd)
        fail("pass ", program_->label(), ": rows [", rowBegin, ", ", rowEnd, ") outside its output's ",
             outputs_[0]->rows(), " rows");
    // Row pairs: the draw covers the pairs that hold the rows (row_output.glsl).
    const int perTexel = rowsPerTexel(outputs_[0]->format());
    if (maxRowsPerRun_ > 0 && rowEnd - rowBegin > maxRowsPerRun_)
        fail("pass ", program_->label(), ": runs at most ", maxRowsPerRun_, " rows at a time, asked for ",
             rowEnd - rowBegin);
    if (rowBegin % groupRows_ != 0 || rowEnd % groupRows_ != 0)
        fail("pass ", program_->label(), ": writes groups of ", groupRows_, " rows, asked for rows [", rowBegin, ", ",
             rowEnd, ")");
    const auto start = std::chrono::steady_clock::now();
    GlObject query;
    if (g_profiling == PassProfiling::GpuTimers) {
        query = GlObject::query();
        glBeginQuery(GL_TIME_ELAPSED_EXT, query.get());
    }
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

    // Row r is row r / R of its page group's layout, on the group's page `r % R` (R = interleave; 1
    // when rows are not interleaved). A draw covers one page and the pages after it that its row
    // groups fill: the physical lines that hold the requested rows of that page, whose fragments
    // the shader discards where they belong to other rows.
    const int R = out.interleave, storedBegin = rowBegin / perTexel, storedEnd = (rowEnd + perTexel - 1) / perTexel;
    int lastLayer = 0;
    glEnable(GL_SCISSOR_TEST);
    glViewport(0, 0, out.width, out.height);
    if (instances_ > 1) {
        glEnable(GL_BLEND);
        glBlendFunc(GL_ONE, GL_ONE);
    }
    for (int phase = 0; phase < R; phase += groupRows_) {
        const int g0 = ceilDiv(storedBegin - phase, R), g1 = floorDiv(storedEnd - 1 - phase, R);  // rows g * R + phase
        if (g0 > g1) continue;
        const int firstLine = int(std::int64_t(g0) * out.texelsPerRow / out.width);
        const int lastLine = int((std::int64_t(g1 + 1) * out.texelsPerRow - 1) / out.width);
        for (int page = firstLine / out.height; page <= lastLine / out.height; ++page) {
            const int y0 = std::max(firstLine - page * out.height, 0);
            const int y1 = std::min(lastLine - page * out.height, out.height - 1);
            const int layer = page * R + phase;
            const Framebuffer& target = framebuffer(layer);
            glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target.id());
            glScissor(0, y0, out.width, y1 - y0 + 1);
            program.setInt(pageLocation_, layer);
            if (instances_ == 1) {
                glDrawArrays(GL_TRIANGLES, 0, 3);
            } else {
                // Rows are whole lines, so the scissored clear touches exactly the rows drawn (clears
                // do not blend).
                const float zero[4] = {0, 0, 0, 0};
                for (int i = 0; i < target.attachments(); ++i) glClearBufferfv(GL_COLOR, GLint(i), zero);
                glDrawArraysInstanced(GL_TRIANGLES, 0, 3, instances_);
            }
            lastLayer = layer;
            ++g_draws;
        }
    }
    if (instances_ > 1) glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    const std::string key = g_profiling != PassProfiling::Off ? program.label() + " -> " + outputs_[0]->name() : "";
    if (g_profiling == PassProfiling::GpuTimers) {
        glEndQuery(GL_TIME_ELAPSED_EXT);
        g_pending.push_back({g_phase, key, std::move(query)});
    } else if (g_profiling == PassProfiling::WallClock) {
        GLuint texel[4];  // 4 floats, or 4 channels of row pairs: a wait for the result either way
        const bool pairs = perTexel > 1;
        glBindFramebuffer(GL_READ_FRAMEBUFFER, framebuffer(lastLayer).id());
        glReadPixels(0, 0, 1, 1, pairs ? GL_RGBA_INTEGER : GL_RGBA, pairs ? GL_UNSIGNED_INT : GL_FLOAT, texel);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
        g_profile[g_phase][key] +=
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
}

}  // namespace gpt2
