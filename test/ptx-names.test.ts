/** Shared-array and parameter names of PTX symbols, as mbsim shows them (src/ptxi/layout.ts shortName). */
import { describe, expect, it } from 'vitest';
import { shortName } from '../src/ptxi/layout.js';

describe('shortName', () => {
  it('a function-local static keeps its own name; a namespace-scope array its last component', () => {
    expect(shortName('_ZZ10tma_kernelPfE4full')).toBe('full');
    expect(shortName('_ZN9deep_gemm11smem_bufferE')).toBe('smem_buffer');
    expect(shortName('_ZN1a1b4barsE')).toBe('bars');
  });
  it('parameters are param_N; other names stay whole', () => {
    expect(shortName('_Z6kernelPi_param_3')).toBe('param_3');
    expect(shortName('plain_smem')).toBe('plain_smem');
    // Not a plain nested name (a template argument list, a length that overruns): left as it is.
    expect(shortName('_ZN9deep_gemmIiE4bufsE')).toBe('_ZN9deep_gemmIiE4bufsE');
    expect(shortName('_ZN99shortE')).toBe('_ZN99shortE');
  });
});
