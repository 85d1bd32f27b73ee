// Preloaded into the API by `npm run bench` (`node --import`): the event loop's delay and the
// garbage collector's pauses, as seen from inside the process, for the tail analysis. SIGUSR2
// writes what was seen since the previous signal to $BENCH_PROBE_FILE and starts over.
import { writeFileSync } from "node:fs";
import { createHistogram, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";

const file = process.env.BENCH_PROBE_FILE;
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const kinds = { 1: "scavenge", 2: "mark-compact", 4: "incremental", 8: "weak-callbacks", 16: "all" };
let pauses = createHistogram();
let gc = {};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = kinds[entry.detail?.kind ?? entry.kind] ?? "other";
    gc[kind] ??= { count: 0, totalMs: 0, maxMs: 0 };
    const seen = gc[kind];
    seen.count++;
    seen.totalMs += entry.duration;
    seen.maxMs = Math.max(seen.maxMs, entry.duration);
    pauses.record(Math.max(1, Math.round(entry.duration * 1000)));
  }
}).observe({ entryTypes: ["gc"] });

const ms = (ns) => Math.round(ns / 1e4) / 100;
process.on("SIGUSR2", () => {
  const snapshot = {
    eventLoopDelayMs: {
      p50: ms(delay.percentile(50)),
      p99: ms(delay.percentile(99)),
      p999: ms(delay.percentile(99.9)),
      max: ms(delay.max),
    },
    gc: Object.fromEntries(
      Object.entries(gc).map(([kind, seen]) => [
        kind,
        { count: seen.count, totalMs: Math.round(seen.totalMs), maxMs: Math.round(seen.maxMs * 10) / 10 },
      ]),
    ),
    gcPauseMs: pauses.count ? { p99: pauses.percentile(99) / 1000, max: pauses.max / 1000 } : null,
  };
  if (file) writeFileSync(file, JSON.stringify(snapshot));
  delay.reset();
  pauses = createHistogram();
  gc = {};
});
