#pragma once
// The one headless GL context all GL tests of a process share (made on first use).
namespace gpt2::testing {
void ensureGlContext();
}
