#pragma once
// GLES 3.0 on both builds: Mesa/NVIDIA through EGL natively, WebGL2 under Emscripten.
#include <GLES3/gl3.h>
