import { readFileSync } from "node:fs";

/** Latencies of one kind of request within one minute. */
export class LatencyBucket {
  private readonly samples: number[] = [];

  add(ms: number): void {
    this.samples.push(ms);
  }

  get count(): number {
    return this.samples.length;
  }

  summary(): { count: number; p50: number; p95: number; p99: number; max: number } {
    const sorted = [...this.samples].sort((a, b) => a - b);
    const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0);
    return { count: sorted.length, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: round(sorted.at(-1) ?? 0) };
  }
}

/** Resident set size of a process in MiB, from /proc (Linux). */
export function rssMiB(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

export function round(value: number): number {
  return Math.round(value * 10) / 10;
}
