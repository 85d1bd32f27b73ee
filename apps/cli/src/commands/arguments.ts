import { parseScaledDecimal } from "@outcomes/core";
import { InvalidArgumentError, Option } from "commander";

/** `--page` from 1, `--limit` 1..100: the operator API's paging rules. */
function pageNumber(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError("a whole number from 1");
  return value;
}

function pageLimit(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 100) throw new InvalidArgumentError("a whole number 1..100");
  return value;
}

export function hours(text: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value)) throw new InvalidArgumentError("a number of hours");
  return value;
}

/** An ISO-8601 date-time with its offset, e.g. 2027-01-31T00:00:00Z (the API's `expiresAt`). */
export function dateTime(text: string): Date {
  const isoWithOffset = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;
  const value = new Date(text);
  if (!isoWithOffset.test(text) || Number.isNaN(value.getTime())) {
    throw new InvalidArgumentError("an ISO-8601 date-time with offset, e.g. 2027-01-31T00:00:00Z");
  }
  return value;
}

/**
 * A positive USD amount, at most 6 decimals and 2^53 − 1 micro-USD, as micro-USD, or `"default"`
 * (commander turns a parser's null into an empty string).
 */
export function usdOrDefault(text: string): number | "default" {
  if (text === "default") return text;
  const micros = /^\d+(\.\d+)?$/.test(text) ? parseScaledDecimal(text) : null;
  if (micros === null || micros <= 0n || micros > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new InvalidArgumentError("a positive USD amount (at most 6 decimals, up to 9007199254.74) or default");
  }
  return Number(micros);
}

export const PAGING_HELP = "--page and --limit page through the list (newest first; limit 1..100, default 20)";

/** The `--page` option of a list command (default 1). */
export const pageOption = () => new Option("--page <n>", "page number").argParser(pageNumber).default(1);

/** The `--limit` option of a list command (default 20), described by what it lists. */
export const limitOption = (items: string) =>
  new Option("--limit <n>", `${items} per page`).argParser(pageLimit).default(20);

/** The page a list command asked for, with the row offset the repositories take. */
export function pageOf(options: Record<string, unknown>): { page: number; limit: number; offset: number } {
  const { page, limit } = options as { page: number; limit: number };
  return { page, limit, offset: (page - 1) * limit };
}
