// Float weights: fetchFourRows gives the weights themselves.
vec4 weightScale(int col) { return vec4(1.0); }
