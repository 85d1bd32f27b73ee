/**
 * Bytes by key, bounded by their total size: past `maxBytes` the least recently used go first. A
 * Map keeps insertion order, and a hit is re-inserted, so its first key is always the one least
 * recently used.
 */
export class ByteBoundedCache {
  private readonly values = new Map<string, Uint8Array<ArrayBuffer>>();
  private total = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now: never more than `maxBytes`. */
  get bytes(): number {
    return this.total;
  }

  get(key: string): Uint8Array<ArrayBuffer> | undefined {
    const value = this.values.get(key);
    if (value !== undefined) {
      this.values.delete(key);
      this.values.set(key, value);
    }
    return value;
  }

  /** Keeps `value` unless it alone is larger than the bound. */
  set(key: string, value: Uint8Array<ArrayBuffer>): void {
    this.delete(key);
    if (value.byteLength > this.maxBytes) return;
    this.values.set(key, value);
    this.total += value.byteLength;
    for (const oldest of this.values.keys()) {
      if (this.total <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  private delete(key: string): void {
    const value = this.values.get(key);
    if (value === undefined) return;
    this.values.delete(key);
    this.total -= value.byteLength;
  }
}
