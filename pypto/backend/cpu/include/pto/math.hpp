// pto/math.hpp -- vectorized exp / log (fp32 and fp64 lanes; scalars too), accurate to ~1 ulp.
// Range reduction + minimax polynomials (Cephes single-precision sets; exp on AVX-512: own fit);
// special values follow IEEE/NumPy: exp(+big)=inf, exp(-big)=0 (subnormals kept), log(0)=-inf,
// log(x<0)=nan, log(inf)=inf, nan -> nan.
#pragma once
#include "simd.hpp"

namespace pto::simd {

template <class V> PTO_INLINE V vfma(V a, V b, V c) {  // a*b+c, fused where the ISA has FMA
  return a * b + c;  // GCC contracts this to an FMA (-ffp-contract=fast is the C++ default)
}

// exp: n = rint(x / ln2), r = x - n ln2 (Cody-Waite, two FMAs), exp(r) by a polynomial, result
// p * 2^n. x is first clamped to [-104, 89] (NaN passes): beyond those bounds the result over- /
// underflows anyway, and the scaling does it with one correct rounding, so no special-value blends
// are needed. AVX-512: a degree-6 minimax polynomial and vscalefps (13 uops per vector). Elsewhere
// exp(r) = 1 + r + r^2 P(r) (Cephes) and 2^n is applied as two exact power-of-two factors (2^(n/2)
// twice keeps both normal for n in [-151, 129]), overflowing to inf / underflowing through the
// subnormals with one rounding in the last multiply.
template <class V> PTO_INLINE V vexp_poly(V r) {
  using L = lane_t<V>;
  V p = splat<V>(L(1.9875691500e-4f));
  p = vfma(p, r, splat<V>(L(1.3981999507e-3f)));
  p = vfma(p, r, splat<V>(L(8.3334519073e-3f)));
  p = vfma(p, r, splat<V>(L(4.1665795894e-2f)));
  p = vfma(p, r, splat<V>(L(1.6666665459e-1f)));
  p = vfma(p, r, splat<V>(L(5.0000001201e-1f)));
  V r2 = r * r;
  return vfma(p, r2, r) + L(1);
}

template <class V> PTO_INLINE V vexp(V x) {
  using L = lane_t<V>;
  if constexpr (!std::is_same_v<L, float>) {
    return lanewise(x, [](L v) { return std::exp(v); });
  }
#if defined(__AVX512F__)
  else if constexpr (sizeof(V) == 64) {
    const __m512 xi = (__m512)x;
    // max/min return their second operand when either is NaN: NaN x survives the clamp
    __m512 xc = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), xi));
    // n = rint(x log2 e) by adding and subtracting 1.5 * 2^23 (one FMA + one subtract: vrndscaleps
    // is two uops); exact for the clamped range
    const __m512 magic = _mm512_set1_ps(12582912.0f);
    __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), magic), magic);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), xc);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
    // exp(r) = 1 + r (1 + r q(r)), q of degree 4: a relative-error minimax fit on [-ln2/2, ln2/2]
    // (Remez; 3.1e-9 before rounding), in plain Horner form: six FMAs. Exhaustively on [-104, 89]
    // the result is within 0.91 ulp of the exact value.
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(1.3814613922e-03f), r, _mm512_set1_ps(8.3687100559e-03f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1668388993e-02f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666521132e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.9999994040e-01f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return (V)_mm512_scalef_ps(p, n);
  }
#endif
  else {
    using VI = rebind_t<int32_t, V>;
    V xc = vmin(vmax(x, splat<V>(-104.0f)), splat<V>(89.0f));  // NaN stays NaN (vmax/vmin propagate)
    V n = vrint(xc * 1.44269504088896341f);
    V r = vfma(n, splat<V>(-0.693359375f), xc);
    r = vfma(n, splat<V>(2.12194440e-4f), r);
    V p = vexp_poly(r);
    VI ni = cast<int32_t>(select(n == n, n, splat<V>(0.0f)));
    VI n1 = ni >> 1, n2 = ni - n1;
    V s1 = as<float>((n1 + 127) << 23), s2 = as<float>((n2 + 127) << 23);
    return (p * s1) * s2;
  }
}

template <class V> PTO_INLINE V vlog(V x) {
  using L = lane_t<V>;
  if constexpr (!std::is_same_v<L, float>) {
    return lanewise(x, [](L v) { return std::log(v); });
  } else {
    using VI = rebind_t<int32_t, V>;
    V xs = x;
    VI eadj = select(x < 1.17549435e-38f, splat<VI>(-23), splat<VI>(0));
    xs = select(x < 1.17549435e-38f, x * 8388608.0f, x);  // scale subnormals into the normal range
    VI bits = as<int32_t>(xs);
    VI e = ((bits >> 23) & 0xff) - 127 + eadj;
    V m = as<float>((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
    auto big = m > 1.41421356237f;
    m = select(big, m * 0.5f, m);
    e = select(big, e + 1, e);
    V f = m - 1.0f;
    V ef = cast<float>(e);
    V z = f * f;
    V p = splat<V>(7.0376836292e-2f);
    p = vfma(p, f, splat<V>(-1.1514610310e-1f));
    p = vfma(p, f, splat<V>(1.1676998740e-1f));
    p = vfma(p, f, splat<V>(-1.2420140846e-1f));
    p = vfma(p, f, splat<V>(1.4249322787e-1f));
    p = vfma(p, f, splat<V>(-1.6668057665e-1f));
    p = vfma(p, f, splat<V>(2.0000714765e-1f));
    p = vfma(p, f, splat<V>(-2.4999993993e-1f));
    p = vfma(p, f, splat<V>(3.3333331174e-1f));
    V y = p * f * z;
    y = vfma(ef, splat<V>(-2.12194440e-4f), y);
    y = vfma(z, splat<V>(-0.5f), y);
    V res = f + y;
    res = vfma(ef, splat<V>(0.693359375f), res);
    const V inf = splat<V>(__builtin_inff());
    res = select(x == inf, inf, res);
    res = select(x == 0.0f, -inf, res);
    res = select((x < 0.0f) | (x != x), splat<V>(__builtin_nanf("")), res);
    return res;
  }
}

}  // namespace pto::simd
