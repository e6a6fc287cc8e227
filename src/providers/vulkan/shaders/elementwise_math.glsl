// Helpers of the elementwise ops' expressions (kernels/elementwise_ops.table), for the compute type T of the
// shader variant's type class (EW_CLASS_FLOAT / EW_CLASS_INT / EW_CLASS_BOOL). fp32 arithmetic for floats.
#if EW_CLASS_FLOAT
float sigmoid_f(float x) { return x >= 0.0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
// tanh(+-10) is +-1 in fp32; the clamp keeps exp-based driver implementations away from inf / inf.
float tanh_f(float x) { return tanh(clamp(x, -10.0, 10.0)); }
// erf: Taylor series near 0 (no cancellation), Abramowitz-Stegun 7.1.26 beyond (|error| < 1.5e-7).
float erf_f(float x) {
  float ax = abs(x);
  if (ax < 0.5) {
    float x2 = x * x;
    return 1.1283791670955126 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (0.1 + x2 * (-1.0 / 42.0 + x2 / 216.0))));
  }
  float t = 1.0 / (1.0 + 0.3275911 * ax);
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-ax * ax));
}
float gelu_erf_f(float x) { return 0.5 * x * (1.0 + erf_f(x * 0.7071067811865476)); }
float gelu_tanh_f(float x) { return 0.5 * x * (1.0 + tanh_f(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
// C pow: negative bases with integral exponents keep their sign; other negative bases give NaN.
float pow_f(float x, float y) {
  if (y == 0.0) return 1.0;
  if (x < 0.0) {
    if (floor(y) != y) return uintBitsToFloat(0x7fc00000u);
    float r = pow(-x, y);
    return mod(y, 2.0) == 1.0 ? -r : r;
  }
  if (x == 0.0) return y > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  return pow(x, y);
}
// ONNX Mod: fmod = true takes the dividend's sign (C fmod), else the divisor's (Python %).
float mod_onnx(float x, float y, bool fmod_mode) {
  float m = x - y * trunc(x / y);
  if (!fmod_mode && m != 0.0 && ((m < 0.0) != (y < 0.0))) m += y;
  return m;
}
#endif
#if EW_CLASS_INT
T mod_onnx(T x, T y, bool fmod_mode) {
  T m = x - (x / y) * y;
  if (!fmod_mode && m != T(0) && ((m < T(0)) != (y < T(0)))) m += y;
  return m;
}
#endif
