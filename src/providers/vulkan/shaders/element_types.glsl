// Raw element storage by size for data-movement kernels (ELEM_BYTES = 1, 2, 4 or 8): ElemBuf, Elem, and
// ELEM_FROM_BITS(lo, hi) (a value from its raw bits). Needs GL_EXT_shader_8bit_storage (declared by the includer).
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16Buf { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer U32x2Buf { uvec2 v[]; };
#if ELEM_BYTES == 1
#define ElemBuf U8Buf
#define Elem uint8_t
#define ELEM_FROM_BITS(lo, hi) uint8_t(lo)
#elif ELEM_BYTES == 2
#define ElemBuf U16Buf
#define Elem uint16_t
#define ELEM_FROM_BITS(lo, hi) uint16_t(lo)
#elif ELEM_BYTES == 4
#define ElemBuf U32Buf
#define Elem uint
#define ELEM_FROM_BITS(lo, hi) (lo)
#else
#define ElemBuf U32x2Buf
#define Elem uvec2
#define ELEM_FROM_BITS(lo, hi) uvec2(lo, hi)
#endif
