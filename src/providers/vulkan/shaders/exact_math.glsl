// Correctly rounded float arithmetic where a driver's own is not: Vulkan lets a division be off by 2.5 ulp (an
// NVIDIA H200's is), and a driver may split fma into a product and a sum (lavapipe does), so exactness is built from
// products and sums that `precise` keeps as written. Used where a result must equal the host's to the bit.

// a * b == p + e exactly (Dekker: products of 12-bit halves, no fma needed; `precise` keeps every rounding).
void two_prod(float a, float b, out float p, out float e) {
  precise float pp = a * b;
  precise float ca = 4097.0 * a, cb = 4097.0 * b;
  precise float ah = ca - (ca - a), bh = cb - (cb - b);
  precise float al = a - ah, bl = b - bh;
  precise float ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
  p = pp;
  e = ee;
}

// a / b correctly rounded, as the host's division: the quotient from the reciprocal corrected by the exact remainder
// a - q b (a driver's division may be off by 2.5 ulp, and a driver may split fma into a product and a sum, so the
// remainder is formed from an exact product instead).
float div_rn(float a, float b) {
  precise float y = 1.0 / b;
  precise float q = a * y;
  float p, e;
  two_prod(q, b, p, e);
  precise float r = (a - p) - e;  // a - p is exact (p is within a few ulps of a)
  precise float c = q + r * y;
  return c;
}

