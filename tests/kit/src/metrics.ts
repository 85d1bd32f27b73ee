/** Prometheus text exposition read back, for the metrics tests of the runtime package, the API and the worker. */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

/**
 * Parses Prometheus text exposition (format 0.0.4) strictly: every line must be a HELP, a TYPE or a
 * sample of a declared family, else it throws naming the line.
 */
export function parseExposition(text: string): Sample[] {
  const families = new Map<string, string>();
  const samples: Sample[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line === "") continue;
    const fail = (why: string) => new Error(`exposition line ${index + 1} ${why}: ${line}`);
    if (line.startsWith("# HELP ")) continue;
    if (line.startsWith("# TYPE ")) {
      const [, , name = "", type = ""] = line.split(" ");
      if (!TYPES.has(type)) throw fail("has an unknown type");
      families.set(name, type);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw fail("is not a sample");
    const [, name = "", labelText = "", valueText = ""] = match;
    const family = [name, ...SUFFIXES.filter((s) => name.endsWith(s)).map((s) => name.slice(0, -s.length))];
    if (!family.some((candidate) => families.has(candidate))) throw fail("has no TYPE");
    const value = parseValue(valueText);
    if (value === undefined) throw fail("has a bad value");
    samples.push({ name, labels: parseLabels(labelText, fail), value });
  }
  return samples;
}

/** Go's ParseFloat, as Prometheus reads values: NaN and Inf in any case. */
function parseValue(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (lower === "nan") return Number.NaN;
  if (lower === "+inf" || lower === "inf") return Infinity;
  if (lower === "-inf") return -Infinity;
  const value = Number(text);
  return text.trim() === "" || Number.isNaN(value) ? undefined : value;
}

function parseLabels(text: string, fail: (why: string) => Error): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw fail("has malformed labels");
    labels[match[1] ?? ""] = (match[2] ?? "").replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  }
  return labels;
}

/** The sum of the samples with this name whose labels include `labels` (0 when none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return found.reduce((sum, sample) => sum + sample.value, 0);
}
