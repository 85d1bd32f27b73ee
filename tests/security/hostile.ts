import fc from "fast-check";

/**
 * Hostile request parts for fast-check. JSON is built as text, because what hostile clients send
 * cannot all be made with JSON.stringify: `-0`, `1e400`, 20-digit integers, duplicate keys and own
 * `__proto__` keys all survive only as text.
 */

/** JSON text written as is. */
export class Raw {
  constructor(readonly text: string) {}
}
/** An object as ordered entries (keys may repeat or be `__proto__`). */
export class Obj {
  constructor(readonly entries: Array<[string, Json]>) {}
}
export type Json = Raw | Obj | Json[];

export function fromValue(value: unknown): Json {
  if (Array.isArray(value)) return value.map(fromValue);
  if (value !== null && typeof value === "object") {
    return new Obj(Object.entries(value).map(([key, inner]) => [key, fromValue(inner)]));
  }
  return new Raw(JSON.stringify(value));
}

export function toText(json: Json): string {
  if (json instanceof Raw) return json.text;
  if (json instanceof Obj) return `{${json.entries.map(([k, v]) => `${JSON.stringify(k)}:${toText(v)}`).join(",")}}`;
  return `[${json.map(toText).join(",")}]`;
}

const raw = (text: string) => new Raw(text);
const str = (text: string) => new Raw(JSON.stringify(text));

const WEIRD_STRINGS = [
  "",
  " ",
  "\t",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e308",
  "-0",
  "0x10",
  "1,5",
  "١٢٣",
  "１２",
  "\u0000",
  "a\u0000b",
  "\r\nX-Injected: yes",
  "https://hooks.example.com/a\r\nX-Injected: yes",
  "http://169.254.169.254/latest/meta-data",
  "../../etc/passwd",
  "' OR '1'='1' --",
  '"; drop table spins; --',
  "%00",
  "%2F..%2F",
  "😀🎰",
  "\u202egnp.exe",
  "\ud800",
  "__proto__",
  "constructor",
  "ks_sandbox_00000000000000000000000000000000000000",
  "$" + "{jndi:ldap://x}",
];

const WEIRD_NUMBERS = [
  "0",
  "-0",
  "-1",
  "1e308",
  "-1e308",
  "1e400",
  "-1e400",
  "1e-400",
  "4.9e-324",
  "1.7976931348623157e308",
  "9007199254740993",
  "2147483648",
  "123456789012345678901234567890",
  "1.0000001",
  "0.1234567",
  "100.0000000001",
  "1e-7",
  "0.000001",
  "1E2",
  "1.5e0",
];

/** More than 6 decimals, at varying magnitudes. */
const tooPrecise = fc
  .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.stringMatching(/^[0-9]{6}[1-9][0-9]{0,12}$/))
  .map(([whole, fraction]) => raw(`${whole}.${fraction}`));

const anyDouble = fc.double().map((d) => {
  if (Object.is(d, -0)) return raw("-0");
  if (Number.isNaN(d)) return str("NaN");
  if (!Number.isFinite(d)) return raw(d > 0 ? "1e400" : "-1e400");
  return raw(String(d));
});

const longString = fc
  .constantFrom("a", "é", "😀", "\u0000", "%")
  .chain((unit) => fc.integer({ min: 200, max: 60_000 }).map((n) => str(unit.repeat(n))));

/** A scalar no field of the API accepts as is (or only barely). */
const hostileLeaf: fc.Arbitrary<Raw> = fc.oneof(
  fc.constantFrom("null", "true", "false").map(raw),
  fc.constantFrom(...WEIRD_STRINGS).map(str),
  fc.constantFrom(...WEIRD_NUMBERS).map(raw),
  tooPrecise,
  anyDouble,
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map((n) => raw(n.toString())),
  fc.string({ unit: "binary", maxLength: 40 }).map(str),
  fc.string({ unit: "grapheme", maxLength: 40 }).map(str),
  longString,
);

/** Nesting deep enough to break a recursive parser, validator, serialiser or jsonb. */
const deepNesting: fc.Arbitrary<Raw> = fc
  .tuple(
    fc.constantFrom("array", "object"),
    fc.oneof(fc.integer({ min: 2, max: 40 }), fc.integer({ min: 500, max: 100_000 })),
  )
  .map(([shape, depth]) =>
    raw(shape === "array" ? "[".repeat(depth) + "]".repeat(depth) : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`),
  );

const POLLUTERS = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"__proto__":null}',
  "{}",
  "[]",
];

export const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 6, arbitrary: hostileLeaf },
  { weight: 1, arbitrary: fc.array(hostileLeaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(...POLLUTERS).map(raw) },
  { weight: 1, arbitrary: deepNesting },
);

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "prototype", "", "toString", "hasOwnProperty", "isAdmin"),
  fc.string({ unit: "binary", maxLength: 20 }),
);

/** Bodies that are not JSON at all (JSON has no NaN, Infinity, leading zeros or trailing commas). */
export const UNPARSEABLE_BODIES = [
  "",
  "{",
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}garbage',
  '{"wagerUsd": NaN}',
  '{"wagerUsd": Infinity}',
  '{"gameId": 01}',
  "\u0000",
];

/** JSON that parses into something no route takes. */
export const WRONG_SHAPE_BODIES = ["null", "[]", '"text"', "12", '{"a": "\\ud800"}', '{"a": "\\u0000"}'];

/** A byte-order mark before the JSON: tolerated by the parser, then judged on the content. */
export const BOM_BODY = "\uFEFF{}";

/** A path segment as a client would percent-encode it (bytes of its UTF-8, lone surrogates replaced). */
export function encodeSegment(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16)}`,
    )
    .join("");
}

/** Path segments sent exactly as written (already encoded, or deliberately broken encodings). */
const RAW_SEGMENTS = [
  "%",
  "%zz",
  "%00",
  "%2F",
  "a%2Fb",
  "%2e%2e",
  "%0d%0aX-Injected:%201",
  "%F0%9F%8E%B0",
  "%ED%A0%80",
  "%C0%AF",
  "__proto__",
  "constructor",
  "1e308",
  "-0",
  "-1",
  "0",
  "NaN",
  "Infinity",
  "0x1",
  "01",
  "%201",
  "2147483648",
  "99999999999999999999",
  "%D9%A3",
  "%EF%BC%91",
  "x".repeat(4000),
];

export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...RAW_SEGMENTS),
  fc.string({ unit: "binary", minLength: 1, maxLength: 60 }).map(encodeSegment),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).map(encodeSegment),
);

/** Query values (encoded by URLSearchParams) and raw query strings with repeated or odd keys. */
export const hostileQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("", " 1", "0", "-0", "-1", "1.5", "1e2", "1e308", "NaN", "Infinity", "0x10", "101", "9".repeat(40)),
  fc.string({ unit: "binary", maxLength: 30 }),
);

export const RAW_QUERIES = [
  "page=1&page=2",
  "limit=1&limit=100",
  "page[]=1",
  "page=%",
  "limit=%zz",
  "__proto__[polluted]=yes",
  "constructor[prototype][polluted]=yes",
  "page=1%00",
  "limit=5%0d%0aX-Injected:%201",
];
