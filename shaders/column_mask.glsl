// A caller's ablation of output columns (model/interventions.h): with COLUMN_MASK, one row of
// u_column_mask holds 1 or 0 per column, so a masked column is exactly 0 and every other is unchanged.
#include "fetch.glsl"

vec4 masked(vec4 value, int texel) {
#ifdef COLUMN_MASK
    return value * fetch(u_column_mask, u_column_mask_layout, 0, texel);
#else
    return value;
#endif
}
