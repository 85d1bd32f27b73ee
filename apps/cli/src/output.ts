import type { CliContext } from "./context.js";

/** Renders rows as aligned columns under upper-case headers; empty values show as "-". */
export function table(headers: string[], rows: Array<Array<string | null | undefined>>): string {
  const cells = rows.map((row) => headers.map((_, index) => row[index] ?? "-"));
  const widths = headers.map((header, index) => Math.max(header.length, ...cells.map((row) => row[index]!.length)));
  const line = (values: string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index]!))
      .join("  ")
      .trimEnd();
  return [line(headers.map((header) => header.toUpperCase())), ...cells.map(line)].join("\n");
}

/** One record as `field  value` lines, for single results (a created partner, an issued key). */
export function record(fields: Record<string, string | boolean | null | undefined>): string {
  const width = Math.max(...Object.keys(fields).map((name) => name.length));
  return Object.entries(fields)
    .map(([name, value]) => `${name.padEnd(width)}  ${value === null || value === undefined ? "-" : String(value)}`)
    .join("\n");
}

function pageFooter(page: { page: number; limit: number; total: number }, shown: number): string {
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  return `page ${page.page} of ${pages}, ${shown} shown, ${page.total} in total`;
}

/** A list command's answer: `{[key]: views, page, limit, total}` for `--json`, else `rows()` and a page footer. */
export function printPage(
  ctx: CliContext,
  key: string,
  views: unknown[],
  page: { page: number; limit: number; total: number },
  rows: () => string,
): void {
  ctx.print({ [key]: views, ...page }, () => [rows(), pageFooter(page, views.length)].join("\n"));
}
