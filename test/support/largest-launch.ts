/**
 * The largest launch mbsim accepts, as a sketch: 1,056 CTAs of 1,024 threads (33,792 warps, the
 * agent limit), 248 mbarriers per CTA (261,888 of the 262,144 allowed) each waited on by every
 * warp, 3,971 buffer elements per CTA (4,193,376 of the 4,194,304 buffer keys). Every warp ends
 * blocked: a hang of 33,792 waiters. Used by the hostile trials' bounds tests.
 */
export const LARGEST = `kernel k arch=sm_90a grid=1056
barrier b[248] count=32
smem A[3971] bytes=1
role p threads=1024:
    for i in range(0, 248):
        mbarrier.arrive b[i]
        mbarrier.try_wait.parity b[i], 0
    ld.shared A[0]
`;
