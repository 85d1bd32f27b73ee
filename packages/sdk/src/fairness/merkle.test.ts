import { referenceLeaf, referencePath, referenceRoot } from "@outcomes/testkit/merkle-reference";
import { describe, expect, it } from "vitest";
import { auditPath, EMPTY_TREE_HASH, merkleLevels, merkleRoot, verifyInclusion } from "./merkle.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const leavesOf = (data: readonly Uint8Array[]) => Buffer.concat(data.map(referenceLeaf));

/** Certificate Transparency's reference inputs and tree heads (RFC 6962 = RFC 9162 hashing). */
const CT_DATA = [
  "",
  "00",
  "10",
  "2021",
  "3031",
  "40414243",
  "5051525354555657",
  "606162636465666768696a6b6c6d6e6f",
].map((data) => Buffer.from(data, "hex"));
const CT_ROOTS = [
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
  "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
  "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
  "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
  "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
  "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
  "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];
/** [leaf index (0-based), tree size, path]: CT's inclusion vectors. */
const CT_INCLUSION: [number, number, string[]][] = [
  [
    0,
    8,
    [
      "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
    ],
  ],
  [
    5,
    8,
    [
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
      "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    ],
  ],
  [2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]],
  [
    1,
    5,
    [
      "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
      "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
      "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    ],
  ],
];

describe("RFC 9162 Merkle tree", () => {
  it("matches Certificate Transparency's tree heads for sizes 0 to 8, as the reference does", () => {
    expect(EMPTY_TREE_HASH).toBe(CT_ROOTS[0]);
    for (let size = 0; size <= 8; size++) {
      const data = CT_DATA.slice(0, size);
      expect(hex(referenceRoot(data)), `reference, size ${size}`).toBe(CT_ROOTS[size]);
      expect(merkleRoot(leavesOf(data)), `merkle.ts, size ${size}`).toBe(CT_ROOTS[size]);
    }
  });

  it("gives CT's inclusion proofs, and verifies them", () => {
    for (const [index, size, expected] of CT_INCLUSION) {
      const data = CT_DATA.slice(0, size);
      expect(referencePath(index, data).map(hex)).toEqual(expected);
      expect(auditPath(merkleLevels(leavesOf(data)), index).map(hex)).toEqual(expected);
      const leaf = hex(referenceLeaf(data[index] as Uint8Array));
      const root = CT_ROOTS[size] as string;
      expect(verifyInclusion({ leaf, index, treeSize: size, auditPath: expected, root })).toBe(true);
    }
  });

  // 2,485 leaves' paths checked against the reference: CPU-bound, and more than vitest's 5 s on a loaded machine.
  it("agrees with the reference on every leaf of every tree up to 70 leaves, and refuses any change", () => {
    const data = Array.from({ length: 70 }, (_, i) => Buffer.from(`entry ${i}|${"x".repeat(i % 7)}`));
    for (let size = 1; size <= 70; size++) {
      const levels = merkleLevels(leavesOf(data.slice(0, size)));
      const root = hex(referenceRoot(data.slice(0, size)));
      expect(hex(levels.at(-1) as Buffer)).toBe(root);
      for (let index = 0; index < size; index++) {
        const path = auditPath(levels, index).map(hex);
        expect(path).toEqual(referencePath(index, data.slice(0, size)).map(hex));
        const leaf = hex(referenceLeaf(data[index] as Uint8Array));
        const proof = { leaf, index, treeSize: size, auditPath: path, root };
        expect(verifyInclusion(proof)).toBe(true);
        if (path.length > 0) {
          const flipped = [...path];
          flipped[0] = `${(flipped[0] as string).slice(0, -1)}${(flipped[0] as string).endsWith("0") ? "1" : "0"}`;
          expect(verifyInclusion({ ...proof, auditPath: flipped })).toBe(false);
          expect(verifyInclusion({ ...proof, auditPath: path.slice(0, -1) })).toBe(false);
          expect(verifyInclusion({ ...proof, index: index ^ 1 })).toBe(false);
        }
      }
    }
  }, 30_000);

  it("hashes leaves given as a view at any byte offset as it does aligned ones", () => {
    const data = Array.from({ length: 37 }, (_, i) => Buffer.from(`entry ${i}`));
    const aligned = leavesOf(data);
    for (const shift of [1, 2, 3]) {
      const view = Buffer.concat([Buffer.alloc(shift), aligned]).subarray(shift);
      expect(hex(merkleLevels(view).at(-1) as Buffer)).toBe(hex(referenceRoot(data)));
    }
  });

  it("refuses malformed input instead of throwing", () => {
    const leaf = CT_ROOTS[1] as string;
    const root = CT_ROOTS[1] as string;
    expect(verifyInclusion({ leaf, index: 0, treeSize: 1, auditPath: [], root })).toBe(true);
    expect(verifyInclusion({ leaf, index: 1, treeSize: 1, auditPath: [], root })).toBe(false);
    expect(verifyInclusion({ leaf, index: -1, treeSize: 1, auditPath: [], root })).toBe(false);
    expect(verifyInclusion({ leaf: "zz", index: 0, treeSize: 1, auditPath: [], root })).toBe(false);
    expect(verifyInclusion({ leaf, index: 0, treeSize: 1, auditPath: ["00"], root })).toBe(false);
  });
});
