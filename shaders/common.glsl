// Shared by every pass: precision, the output coordinate, and `fetch`, the one place that knows how
// a logical matrix (row, texel) is laid out in a 2D array texture (src/gl/tensor_layout.h).
precision highp float;
precision highp int;
precision highp sampler2DArray;

// Every layout is (texelsPerRow, width, height, mode): mode 1 unfolded, -s one page of width 2^s,
// 32 + s one row per line in pages of 2^s lines, 0 anything else (src/gl/tensor_layout.h). Each input sampler NAME has its layout compiled in as
// the constant NAME_layout (src/gl/pass.cpp), so `fetch` folds to the arithmetic of that one mode:
// software renderers run every branch of a uniform-dependent `if`, and divide lane by lane.
// The output's layout stays a uniform: it is used once per fragment.
uniform ivec4 u_out_layout;
uniform int u_out_page;
uniform ivec2 u_rows;  // the output rows [begin, end) this draw renders

// The logical (row, texel) this fragment writes. Lines can hold rows outside the range being
// rendered (folded layouts); those fragments are discarded so their texels keep their contents.
ivec2 outputCoord() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    int linear = (u_out_page * u_out_layout.z + p.y) * u_out_layout.y + p.x;
    int row = linear / u_out_layout.x;
    if (row < u_rows.x || row >= u_rows.y) discard;
    return ivec2(row, linear - row * u_out_layout.x);
}

vec4 fetch(highp sampler2DArray t, ivec4 L, int row, int texel) {
    if (L.w == 1) return texelFetch(t, ivec3(texel, row, 0), 0);
    int linear = row * L.x + texel;
    if (L.w < 0) return texelFetch(t, ivec3(linear & (L.y - 1), linear >> -L.w, 0), 0);
    if (L.w >= 32) return texelFetch(t, ivec3(texel, row & (L.z - 1), row >> (L.w - 32)), 0);
    int pageTexels = L.y * L.z;
    int page = linear / pageTexels;
    int inPage = linear - page * pageTexels;
    int y = inPage / L.y;
    return texelFetch(t, ivec3(inPage - y * L.y, y, page), 0);
}
