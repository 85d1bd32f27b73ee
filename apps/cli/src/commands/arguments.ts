import { InvalidArgumentError } from "commander";

/** `--page` from 1, `--limit` 1..100: the operator API's paging rules. */
export function pageNumber(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError("a whole number from 1");
  return value;
}

export function pageLimit(text: string): number {
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

export const PAGING_HELP = "--page and --limit page through the list (newest first; limit 1..100, default 20)";
