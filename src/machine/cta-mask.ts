/**
 * The one meaning of a cluster CTA mask: the `ctaMask` operand of `cp.async.bulk{.tensor}
 * .multicast::cluster` and of `tcgen05.commit .multicast::cluster` (PTX ISA §9.7.9.25.4.1,
 * §9.7.16.8.11). The operand is a 16-bit value (`.b16`): bit `r` selects CTA rank `r` of the
 * issuer's cluster. A sketch's integer is taken as that 16-bit value, two's complement for negative
 * values (`multicast=-1`, the `~0` idiom, is 0xffff: every CTA). Bits of ranks beyond the cluster
 * select nothing; a mask that selects no CTA of the cluster is the machine's `multicast-mask`
 * diagnostic (the copy or commit would deliver nothing), and a literal one the sketch's error.
 *
 * Whether an operation multicasts at all is whether its IR op has a `multicast` operand (the
 * compiled `ints.multicast`): no `multicast=` written is the unicast form, never a mask value.
 */

/** The 16 bits of cluster CTA mask `mask` (two's complement of a negative value). */
export function ctaMask16(mask: number): number {
  // `&` takes the integer modulo 2^32 (ToInt32), exact for every safe integer; 0xffff keeps 16 bits.
  return mask & 0xffff;
}

/**
 * The CTA ranks (ascending, within `0 .. clusterSize − 1`) that `mask` selects, or a sentence
 * saying why it selects none (it is 0, or every bit it has is of a rank beyond the cluster).
 */
export function maskRanks(mask: number, clusterSize: number): number[] | { problem: string } {
  const m = ctaMask16(mask);
  const ranks: number[] = [];
  for (let r = 0; r < clusterSize; r++) if (m & (1 << r)) ranks.push(r);
  if (ranks.length > 0) return ranks;
  const hex = `0x${m.toString(16).padStart(4, '0')}`;
  const as16 = m === mask ? '' : ` (${mask} as a 16-bit mask)`;
  if (m === 0) return { problem: `multicast mask ${hex}${as16} selects no CTA` };
  return { problem: `multicast mask ${hex}${as16} selects only CTA ranks beyond the cluster of ${clusterSize} (0..${clusterSize - 1})` };
}

/**
 * `ranks` (ascending, as {@link maskRanks} gives them) in the order the machine creates one
 * operation per destination CTA: from the issuer's own rank `start` upward, wrapping around the
 * cluster of `clusterSize`. The order is then the same relative to the issuer in every CTA, so a
 * rotation of the cluster's ranks maps one CTA's in-flight multicast onto its image's exactly (the
 * checker's CTA symmetry, check/cta-symmetry.ts, identifies such states only when it does). Which
 * destination is credited first has no meaning of its own: each destination's operation is its
 * own asynchronous step.
 */
export function ranksFrom(ranks: readonly number[], start: number, clusterSize: number): number[] {
  const rel = (r: number) => (r - start + clusterSize) % clusterSize;
  return [...ranks].sort((x, y) => rel(x) - rel(y));
}
