// The entry point of a CHAIN variant (chain.glsl): run the kernel's main (every return in it is uniform across the
// workgroup), which waits for the dispatches this one depends on where it calls CHAIN_WAIT() — or, where it does
// not, first thing — then count this workgroup as finished.
#if CHAIN
#undef main
const uint CHAIN_SPIN_LIMIT = 1u << 22;  // polls of the count (each a round trip to the device-coherent cache)

void chain_wait() {
  chain_waited = true;
  if (p.chain_wait_for == 0u) return;
  ChainBuf chain = ChainBuf(uvec2(CHAIN_COUNTERS_LO, CHAIN_COUNTERS_HI));
  if (gl_LocalInvocationIndex == 0u) {
    uint polls = 0u;
    while (chain.v[0] < p.chain_wait_for && chain.v[1] == 0u) {
      if (++polls == CHAIN_SPIN_LIMIT) {
        atomicAdd(chain.v[1], 1u);
        break;
      }
    }
  }
  memoryBarrierBuffer();
  barrier();
}

void main() {
#ifndef CHAIN_KERNEL_WAITS
  chain_wait();
#endif
  chain_kernel_main();
  if (!chain_waited) chain_wait();
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationIndex == 0u)
    atomicAdd(ChainBuf(uvec2(CHAIN_COUNTERS_LO, CHAIN_COUNTERS_HI)).v[0], 1u);
}
#endif
