#include "support/gl_test_environment.h"

#include "platform/native/egl_context.h"

namespace gpt2::testing {

// Kept until the process ends: tearing EGL down at exit unloads the driver, and LeakSanitizer then
// reports the driver's own bookkeeping as unreachable memory of an unknown module.
EglContext* g_sharedContext = nullptr;

void ensureGlContext() {
    if (!g_sharedContext) g_sharedContext = new EglContext;
}

}  // namespace gpt2::testing
