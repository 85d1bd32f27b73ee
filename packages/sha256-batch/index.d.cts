/** Many SHA-256 digests per call (src/sha256_batch.c). */
export interface Sha256BatchBinding {
  /** Message k is `input[bounds[2k] .. bounds[2k + 1])`; its digest goes to `out[32k .. 32k + 32)`. */
  hashMany(input: Uint8Array, bounds: Uint32Array, out: Uint8Array): void;
  /** RFC 9162 inner nodes SHA-256(0x01 ‖ left ‖ right) of the first `pairs` pairs of `level`, into `out`. */
  hashPairs(level: Uint8Array, pairs: number, out: Uint8Array): void;
}

/** The loaded binding, or null where it was not built or cannot load (see `loadError`). */
export declare const sha256Batch: Sha256BatchBinding | null;
/** The path of the loaded binding (for a worker thread to load it), or null. */
export declare const modulePath: string | null;
/** Why the binding is not loaded, or null. */
export declare const loadError: string | null;
