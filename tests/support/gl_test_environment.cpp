#include "support/gl_test_environment.h"

#include "platform/native/egl_context.h"

namespace gpt2::testing {

void ensureGlContext() {
    static EglContext context;
}

}  // namespace gpt2::testing
