// Dispatch chaining (CommandRecorder::set_chaining, command_recorder.h). In a chained sequence a dispatch that
// depends on earlier ones gets no pipeline barrier: its workgroups start while the earlier dispatches finish, load
// what does not depend on them (weights), then wait until every workgroup of every earlier chained dispatch of the
// sequence has finished — a device counter reaching `chain_target` — and each workgroup adds itself to the counter
// once its writes are done. So a step pays no barrier drain and overlaps a kernel's weight loads with its
// producer's tail. Reads of what earlier dispatches of the sequence wrote go through coherent pointers (not a
// possibly stale non-coherent cache). Before its wait a kernel may read only what no chainable kernel writes (the
// recorder orders everything else with barriers). chain_target bit 31 clear: a plain dispatch (barriers).
// Requires the device to start a dispatch's workgroups only after all of the previous dispatch's have started
// (true of the GPUs the tuning table enables it for); a wait that never ends stops after kChainSpinLimit polls and
// flags `timed_out`, which the host turns into an error instead of a hang.
// A chainable kernel's push constants begin with `ChainSync chain; uint chain_target;` (12 bytes: bit 31 of the
// target says chaining is on; the next 4 bytes are the kernel's own).
layout(buffer_reference, std430, buffer_reference_align = 8) volatile coherent buffer ChainSync {
  uint count;      // workgroups of chained dispatches finished in this replay (zeroed by the sequence's start)
  uint timed_out;  // 1 when a wait gave up
};

const uint kChainSpinLimit = 1u << 22;

// Called by every invocation of the workgroup, in uniform control flow, before the first read of anything an
// earlier dispatch of the sequence wrote and before the first write.
void chain_wait(ChainSync s, uint target_on) {
  if ((target_on >> 31) == 0u) return;
  uint target = target_on & 0x7fffffffu;
  if (gl_LocalInvocationIndex == 0u) {
    uint spins = 0u;
    while (s.count < target) {
      if (++spins == kChainSpinLimit) {
        atomicMax(s.timed_out, 1u);
        break;
      }
      // Back off between polls (~0.1 µs of dependent integer work) so hundreds of waiting workgroups do not flood
      // the counter's cache line while the producer's workgroups add to it.
      uint k = spins;
      for (uint i = 0u; i < 48u; i++) k = k * 1664525u + 1013904223u;
      if (k == 0x7fffffffu) spins++;  // keeps the loop (never matters)
    }
    memoryBarrierBuffer();
  }
  barrier();
  memoryBarrierBuffer();
}

// Called by every invocation of the workgroup, in uniform control flow, exactly once, after its last write.
void chain_signal(ChainSync s, uint target_on) {
  if ((target_on >> 31) == 0u) return;
  memoryBarrierBuffer();
  barrier();
  if (gl_LocalInvocationIndex == 0u) atomicAdd(s.count, 1u);
}
