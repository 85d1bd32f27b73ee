import { blockQueueItemWriter, decimalDigits, writeDecimal } from "@outcomes/core";

/** A complete `RPUSH list item…` in RESP (the Redis wire protocol), and how many items it pushes. */
export interface RpushCommand {
  wire: Buffer;
  count: number;
}

/**
 * A buffer the caller lends to `blockRpush` to write into instead of allocating ~1.5 MB per block
 * (which costs garbage collections): the command is a view of it, valid until the next use.
 */
export interface ItemScratch {
  bytes: Buffer;
}

const CR = 0x0d;
const LF = 0x0a;
const DOLLAR = 0x24;
/** Before a RESP item: `$`, up to 6 digits of length, CRLF. */
const ITEM_HEADER_ROOM = 9;
/** The header and the CRLF after the item. */
const ITEM_FRAMING = ITEM_HEADER_ROOM + 2;

const rpushHeader = (list: string, count: number) =>
  `*${count + 2}\r\n$5\r\nRPUSH\r\n$${Buffer.byteLength(list)}\r\n${list}\r\n`;

/**
 * A block's queue items as one `RPUSH list item…` command on the wire (what the blocks worker
 * sends to Redis), each item a bulk string written once here, so the client library does not
 * encode 10,000 arguments. `skip(index)` leaves out outcomes already used (queue rebuilds). With
 * `scratch` the command is written into the caller's buffer (see `ItemScratch`).
 */
export function blockRpush(
  entries: Uint8Array | string,
  blockId: number,
  list: string,
  options: { skip?: (index: number) => boolean; scratch?: ItemScratch } = {},
): RpushCommand {
  const { skip, scratch } = options;
  const items = blockQueueItemWriter(entries, blockId);
  // The RPUSH header depends on the count, known at the end: room for the longest one first.
  const headerRoom = 40 + Buffer.byteLength(list);
  const capacity = headerRoom + items.size * (items.maxItemBytes + ITEM_FRAMING);
  if (scratch && scratch.bytes.length < capacity) scratch.bytes = Buffer.allocUnsafe(capacity);
  const out = scratch ? scratch.bytes : Buffer.allocUnsafe(capacity);
  // By number of index digits: the digits of every such item's length, or 0 when they vary.
  const lengthWidths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((indexDigits) => {
    const { min, max } = items.itemBytes(indexDigits);
    const digits = decimalDigits(min);
    return digits === decimalDigits(max) ? digits : 0;
  });
  let at = headerRoom;
  let count = 0;
  for (let index = 0; index < items.size; index++) {
    if (skip?.(index)) continue;
    // An item's length is known once it is written. When every item with this many index digits
    // has a length of the same number of digits, the `$length` header has a known width and the
    // item is written in place; otherwise it goes after room for the longest header and is moved
    // left over the unused part (one native memmove).
    const lengthDigits = lengthWidths[decimalDigits(index)];
    const itemStart = at + (lengthDigits ? lengthDigits + 3 : ITEM_HEADER_ROOM);
    const end = items.write(index, out, itemStart);
    const length = end - itemStart;
    const placed = at + 3 + decimalDigits(length);
    if (placed !== itemStart) out.copyWithin(placed, itemStart, end);
    out[at++] = DOLLAR;
    at = writeDecimal(out, at, length);
    out[at++] = CR;
    out[at++] = LF;
    at += length;
    out[at++] = CR;
    out[at++] = LF;
    count++;
  }
  const header = Buffer.from(rpushHeader(list, count), "latin1");
  header.copy(out, headerRoom - header.length);
  return { wire: out.subarray(headerRoom - header.length, at), count };
}

/** `RPUSH list item…` of item strings. */
export function rpushOf(list: string, items: readonly string[]): RpushCommand {
  const parts = [rpushHeader(list, items.length)];
  for (const item of items) parts.push(`$${Buffer.byteLength(item)}\r\n${item}\r\n`);
  return { wire: Buffer.from(parts.join("")), count: items.length };
}
