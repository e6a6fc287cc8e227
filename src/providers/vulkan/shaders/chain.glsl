// Chained dispatches (CHAIN = 1, the *_chain pipelines; command_recorder.h says when the host records them): a
// dispatch that depends on earlier ones waits for them inside the shader instead of behind a pipeline barrier, so
// consecutive dispatches overlap (the next one's workgroups start while the last ones of the previous finish) and
// the ~2.5 us a barrier costs per dependent dispatch is gone.
//   - The recorder keeps a count of finished workgroups in word 0 of the context's counter buffer (zeroed at the start
//     of every recorded sequence; its address comes in specialization constants 100 and 101, low and high word). Every workgroup of a chain dispatch adds 1 when done (all its writes made visible first); a dispatch
//     that must see earlier results waits until the count reaches `chain_wait_for` (the workgroups of every chain
//     dispatch recorded before it since the last real barrier).
//   - Buffers are coherent in these variants, so results cross workgroups through the device-coherent cache level.
//   - The wait is bounded: after CHAIN_SPIN_LIMIT polls the workgroup counts a timeout in chain.v[1] and goes on
//     (that step's results are wrong; the host turns the count into an error, and every later wait gives up at once):
//     word 1 of the buffer.
// Included by common.glsl; a shader built with CHAIN declares CHAIN_PUSH as the last member of its push constants
// (the kernel's own fields end by byte 124) and includes chain_main.glsl after its main().
#ifndef CHAIN
#define CHAIN 0
#endif
#if CHAIN
#define CHAIN_COHERENT coherent
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer ChainBuf { uint v[]; };
layout(constant_id = 100) const uint CHAIN_COUNTERS_LO = 0;
layout(constant_id = 101) const uint CHAIN_COUNTERS_HI = 0;
// The last word of the 128 bytes every device has (pipeline.h kChainPushOffset).
#define CHAIN_PUSH layout(offset = 124) uint chain_wait_for;
#define main chain_kernel_main  // chain_main.glsl's main() wraps the kernel's
// Where the kernel waits (workgroup-uniform control flow): after loading what does not depend on earlier dispatches
// (weights). A kernel that never calls it waits when it returns (before counting itself finished: a workgroup
// never finishes ahead of the dispatches it follows).
bool chain_waited = false;
void chain_wait();
#define CHAIN_WAIT() chain_wait()
#else
#define CHAIN_WAIT()
#define CHAIN_COHERENT
#define CHAIN_PUSH
#endif
