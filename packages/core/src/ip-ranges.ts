import { isIPv4, isIPv6 } from "node:net";

/**
 * Address ranges a webhook must never reach (SSRF): anything not globally routable. The label is
 * what a partner sees in the refusal; `loopback` is the one range sandbox localhost URLs may use.
 */
export const LOOPBACK = "loopback";

type Range = { prefix: number[]; bits: number; label: string };

const V4_RANGES: Array<[string, number, string]> = [
  ["0.0.0.0", 8, "this-network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, LOOPBACK],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const V6_RANGES: Array<[string, number, string]> = [
  ["::1", 128, LOOPBACK],
  ["::", 96, "unspecified or IPv4-compatible"],
  ["64:ff9b:1::", 48, "local-use NAT64"],
  ["100::", 64, "discard-only"],
  ["2001::", 23, "IETF protocol assignments"],
  ["2001:db8::", 32, "documentation"],
  ["3fff::", 20, "documentation"],
  ["fc00::", 7, "unique local (private)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

const toRanges = (ranges: Array<[string, number, string]>, parse: (text: string) => number[] | null): Range[] =>
  ranges.map(([text, bits, label]) => ({ prefix: parse(text) ?? [], bits, label }));

export function parseIPv4(text: string): number[] | null {
  if (!isIPv4(text)) return null;
  return text.split(".").map(Number);
}

/** 16 bytes of an IPv6 address (zone id dropped, an embedded dotted quad supported). */
export function parseIPv6(input: string): number[] | null {
  const text = input.replace(/%.*$/, "");
  if (!isIPv6(text)) return null;
  let body = text;
  const quad = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a = 0, b = 0, c = 0, d = 0] = parseIPv4(quad[2] ?? "") ?? [];
    body = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = body.split("::");
  const words = (part: string | undefined) => (part ? part.split(":").map((word) => Number.parseInt(word, 16)) : []);
  const head = words(halves[0]);
  const tail = words(halves[1]);
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...new Array<number>(fill).fill(0), ...tail];
  if (all.length !== 8) return null;
  return all.flatMap((word) => [(word >> 8) & 0xff, word & 0xff]);
}

const V4 = toRanges(V4_RANGES, parseIPv4);
const V6 = toRanges(V6_RANGES, parseIPv6);

function inRange(bytes: number[], range: Range): boolean {
  for (let bit = 0; bit < range.bits; bit++) {
    const index = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((bytes[index] ?? 0) & mask) !== ((range.prefix[index] ?? 0) & mask)) return false;
  }
  return true;
}

function classifyV4(bytes: number[]): string | null {
  return V4.find((range) => inRange(bytes, range))?.label ?? null;
}

const startsWith = (bytes: number[], prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
const MAPPED = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const NAT64 = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];

function classifyV6(bytes: number[]): string | null {
  // Addresses that embed an IPv4 one are judged by it (::ffff:10.0.0.1 is 10.0.0.1).
  if (startsWith(bytes, MAPPED) || startsWith(bytes, NAT64)) return classifyV4(bytes.slice(12));
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return classifyV4(bytes.slice(2, 6));
  const named = V6.find((range) => inRange(bytes, range))?.label;
  if (named) return named;
  // Only global unicast (2000::/3) is routable on the internet.
  return ((bytes[0] ?? 0) & 0xe0) === 0x20 ? null : "reserved";
}

/**
 * Null when the address is public; otherwise the label of the range that refuses it. Text that is
 * not an IP address at all is refused too (the caller passes resolved addresses only).
 */
export function classifyAddress(address: string): string | null {
  const v4 = parseIPv4(address);
  if (v4) return classifyV4(v4);
  const v6 = parseIPv6(address);
  if (v6) return classifyV6(v6);
  return "not an IP address";
}
