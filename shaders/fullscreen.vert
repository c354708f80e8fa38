// The vertex shader of every pass but the one-row matmuls (matmul_row.vert). Instanced draws
// (split-K, src/gl/pass.h) tell each fragment its copy.
#include "fullscreen.glsl"

flat out int v_instance;

void main() {
    v_instance = gl_InstanceID;
    gl_Position = fullscreenTriangleCorner();
}
