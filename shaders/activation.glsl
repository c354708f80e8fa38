// Activations of the MLP, by kind: 0 none, 1 gelu_new (tanh), 2 gelu (erf), 3 relu. Kinds are
// compile-time constants, so `activate` folds to one of them.

vec4 geluTanh(vec4 x) {
    // tanh of a large argument is NaN on some drivers; it is +-1 to fp32 precision beyond 10.
    vec4 u = clamp(0.7978845608028654 * (x + 0.044715 * x * x * x), -10.0, 10.0);
    return 0.5 * x * (1.0 + tanh(u));
}

vec4 erfApprox(vec4 x) {
    // Abramowitz & Stegun 7.1.26, |error| < 1.5e-7.
    vec4 s = sign(x);
    vec4 a = abs(x);
    vec4 t = 1.0 / (1.0 + 0.3275911 * a);
    vec4 poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return s * (1.0 - poly * exp(-a * a));
}

vec4 activate(vec4 x, int kind) {
    if (kind == 1) return geluTanh(x);
    if (kind == 2) return 0.5 * x * (1.0 + erfApprox(x * 0.7071067811865476));
    if (kind == 3) return max(x, vec4(0.0));
    return x;
}
