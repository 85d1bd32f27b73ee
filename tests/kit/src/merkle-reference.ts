import { createHash } from "node:crypto";

/**
 * Test support: RFC 9162 §2.1.1 and §2.1.3.1 written again from the RFC's recursive
 * definitions, independently of merkle.ts (which builds bottom-up), so tests check the service's
 * trees and proofs against code that does not share its mistakes. MTH and PATH over leaf *data*.
 */
const sha256 = (...parts: Uint8Array[]) => {
  const digest = createHash("sha256");
  for (const part of parts) digest.update(part);
  return digest.digest();
};
const largestPowerOfTwoBelow = (n: number) => 2 ** Math.floor(Math.log2(n - 1));

export const referenceLeaf = (data: Uint8Array) => sha256(Uint8Array.of(0), data);

export function referenceRoot(data: readonly Uint8Array[]): Buffer {
  if (data.length === 0) return sha256();
  if (data.length === 1) return referenceLeaf(data[0] as Uint8Array);
  const k = largestPowerOfTwoBelow(data.length);
  return sha256(Uint8Array.of(1), referenceRoot(data.slice(0, k)), referenceRoot(data.slice(k)));
}

export function referencePath(m: number, data: readonly Uint8Array[]): Buffer[] {
  if (data.length <= 1) return [];
  const k = largestPowerOfTwoBelow(data.length);
  return m < k
    ? [...referencePath(m, data.slice(0, k)), referenceRoot(data.slice(k))]
    : [...referencePath(m - k, data.slice(k)), referenceRoot(data.slice(0, k))];
}
