/**
 * A small PTX kernel with three scalar parameters (the barrier's count and two more that must add
 * up to 3, else `trap`), shared by the launch and missing-parameter tests, the tail its variants
 * end with, and its variant that reads param_2 only after a branch and a barrier (LATE).
 */
// The end of SCALARS and of the launch tests' struct kernel: %r1 the barrier's count, %r4 = 3 or a trap; thread 0 initializes
// the barrier, all 64 threads arrive and wait for its phase 0.
export const CHECK_TAIL = `setp.ne.s32 %p1, %r4, 3;
@%p1 trap;
mov.u32 %r5, %tid.x;
setp.ne.s32 %p1, %r5, 0;
@%p1 bra SKIP;
mov.u32 %r6, bar;
mbarrier.init.shared.b64 [%r6], %r1;
SKIP:
bar.sync 0;
mov.u32 %r6, bar;
mbarrier.arrive.shared.b64 _, [%r6];
W:
mbarrier.try_wait.parity.shared.b64 %p2, [%r6], 0;
@!%p2 bra W;
ret;
}
`;

/** The entry, its registers and barrier, and the loads of param_0 and param_1 that both kernels begin with. */
const HEAD = `.version 9.0
.target sm_90a
.address_size 64
.visible .entry _Z7scalarsiii(.param .u32 _Z7scalarsiii_param_0, .param .u32 _Z7scalarsiii_param_1, .param .u32 _Z7scalarsiii_param_2)
.reqntid 64, 1, 1
{
.reg .pred %p<4>;
.reg .b32 %r<8>;
.shared .align 8 .b8 bar[8];
ld.param.u32 %r1, [_Z7scalarsiii_param_0];
ld.param.u32 %r2, [_Z7scalarsiii_param_1];
`;

// Three scalar parameters: the barrier's count and two more that must add up to 3.
export const SCALARS = HEAD + `ld.param.u32 %r3, [_Z7scalarsiii_param_2];
add.s32 %r4, %r2, %r3;
` + CHECK_TAIL;

// SCALARS (test/support/ptx-scalars.ts) with param_2 read after a lane-varying branch and a bar.sync: no run reaches it
// without running, so the check's search and the run's simulation decide.
export const LATE = HEAD + `mov.u32 %r5, %tid.x;
setp.ne.s32 %p1, %r5, 0;
@%p1 bra SKIP;
mov.u32 %r6, bar;
mbarrier.init.shared.b64 [%r6], %r1;
SKIP:
bar.sync 0;
ld.param.u32 %r3, [_Z7scalarsiii_param_2];
add.s32 %r4, %r2, %r3;
setp.ne.s32 %p1, %r4, 3;
@%p1 trap;
mov.u32 %r6, bar;
mbarrier.arrive.shared.b64 _, [%r6];
W:
mbarrier.try_wait.parity.shared.b64 %p2, [%r6], 0;
@!%p2 bra W;
ret;
}
`;
