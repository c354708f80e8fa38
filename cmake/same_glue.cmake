# Script mode (cmake -P): fails unless the SIMD build's glue (SIMD) and the build without SIMD's
# (NOSIMD) are the same but for the name of their .wasm file, so that the site ships one glue for
# both (web/module/gpt2-native.js tells it which .wasm to load).
file(READ ${SIMD} simd)
file(READ ${NOSIMD} nosimd)
string(REPLACE "gpt2-wasm-nosimd.wasm" "gpt2-wasm.wasm" nosimd "${nosimd}")
if(NOT simd STREQUAL nosimd)
  message(FATAL_ERROR "${SIMD} and ${NOSIMD} differ beyond the name of their .wasm file: the site cannot serve both with one glue")
endif()
