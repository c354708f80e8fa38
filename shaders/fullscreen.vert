// One triangle that covers the whole viewport: vertices (-1,-1), (3,-1), (-1,3). No attributes.
// Instanced draws (split-K, src/gl/pass.h) tell each fragment its copy.
flat out int v_instance;

void main() {
    v_instance = gl_InstanceID;
    vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
