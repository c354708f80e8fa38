// OUTPUTS render targets (several outputs, or Pass::writeRowGroups), written through `store`:
// GLSL ES 3.00 indexes fragment outputs with constant expressions only.
layout(location = 0) out vec4 o_out[OUTPUTS];

void store(vec4 result[OUTPUTS]) {
    o_out[0] = result[0];
#if OUTPUTS > 1
    o_out[1] = result[1];
#endif
#if OUTPUTS > 2
    o_out[2] = result[2];
#endif
#if OUTPUTS > 3
    o_out[3] = result[3];
#endif
#if OUTPUTS > 4
    o_out[4] = result[4];
#endif
#if OUTPUTS > 5
    o_out[5] = result[5];
#endif
#if OUTPUTS > 6
    o_out[6] = result[6];
#endif
#if OUTPUTS > 7
    o_out[7] = result[7];
#endif
}
