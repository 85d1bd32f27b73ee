const LITTLE_ENDIAN_HOST = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * Short byte strings (symbol ids, tier texts, whole columns) packed into one array, each from a
 * 4-byte boundary, and written a 32-bit word at a time: several times cheaper per piece than a
 * `TypedArray#set` (a native call) or a byte loop, which is what lets 10,000 leaves be written in
 * about a millisecond. The last word is written whole, so up to 3 bytes past the piece's end are
 * overwritten: the caller leaves that room, and writes what follows over it.
 */
export class TextPieces {
  private readonly words: Int32Array;
  private readonly word: Int32Array;
  private readonly length: Int32Array;
  /** The longest piece's length. */
  readonly longest: number;

  constructor(pieces: readonly Uint8Array[]) {
    this.word = new Int32Array(pieces.length);
    this.length = new Int32Array(pieces.length);
    let words = 0;
    pieces.forEach((piece, index) => {
      this.word[index] = words;
      this.length[index] = piece.length;
      words += (piece.length + 3) >> 2;
    });
    this.words = new Int32Array(words);
    const bytes = new Uint8Array(this.words.buffer);
    pieces.forEach((piece, index) => {
      bytes.set(piece, 4 * (this.word[index] as number));
    });
    this.longest = Math.max(0, ...pieces.map((piece) => piece.length));
  }

  /** Writes piece `index` at byte `at` of `out`; answers where the piece ends. */
  write(index: number, out: DataView, at: number): number {
    const length = this.length[index] as number;
    const first = this.word[index] as number;
    for (let word = 0; 4 * word < length; word++)
      out.setInt32(at + 4 * word, this.words[first + word] as number, LITTLE_ENDIAN_HOST);
    return at + length;
  }
}
