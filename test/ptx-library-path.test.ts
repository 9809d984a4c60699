// Which CUDA frames of an inlined-at chain are the toolkit's (left out of a hazard's origin) and
// which are the user's: a project's own `include/` folder (a header-only kernel library) is the
// user's code, so its kernel line is cited with the call sites it was inlined at.
import { describe, expect, it } from 'vitest';
import { isLibraryPath, originText } from '../src/ptx/index.js';

describe('isLibraryPath', () => {
  it.each([
    '<cuda>/include/cccl/cuda/__ptx/instructions/generated/mbarrier_wait.h',
    '/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/sm_30_intrinsics.hpp',
    '/usr/local/cuda/include/cuda/barrier',
    '/usr/local/cuda-12.8/targets/x86_64-linux/include/crt/math_functions.hpp',
    '/opt/nvidia/hpc_sdk/Linux_x86_64/24.1/cuda/12.3/include/cuda_bf16.hpp',
    'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v13.0\\include\\cuda_runtime.h',
    '/home/u/.venv/lib/python3.12/site-packages/nvidia/cuda_runtime/include/cuda_runtime.h',
    '/home/u/cccl/libcudacxx/include/cuda/std/atomic',
    '/usr/include/c++/13/bits/stl_algobase.h',
  ])('the toolkit\'s: %s', (p) => expect(isLibraryPath(p)).toBe(true));

  it.each([
    '/tmp/proj/include/proj/impls/gemm.cuh',
    '/work/cutlass/include/cutlass/arch/barrier.h',
    'kernel.cu',
    'src/include/pipeline.cuh',
    '/home/u/cudakernels/include/ring.cuh',
  ])('the user\'s: %s', (p) => expect(isLibraryPath(p)).toBe(false));
});

describe('originText of a header-only kernel', () => {
  it('cites the innermost project frame and every call site up to the kernel, the toolkit frame left out', () => {
    const frames = [
      { path: '/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/sm_20_intrinsics.hpp', line: 151 },
      { path: '/tmp/proj/include/proj/barrier.h', line: 426 },
      { path: '/tmp/proj/include/proj/barrier.h', line: 372 },
      { path: '/tmp/proj/include/proj/impls/gemm.cuh', line: 294 },
    ];
    expect(originText(frames)).toBe('/tmp/proj/include/proj/barrier.h:426, inlined at /tmp/proj/include/proj/barrier.h:372, inlined at /tmp/proj/include/proj/impls/gemm.cuh:294');
  });
});
