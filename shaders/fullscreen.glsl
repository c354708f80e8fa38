// The one triangle that covers the whole viewport, vertex gl_VertexID of (-1,-1), (3,-1), (-1,3):
// every pass draws it (per output page), so no vertex attributes are needed.
vec4 fullscreenTriangleCorner() {
    vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
    return vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
