import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import type postgres from "postgres";

/** What the API and Postgres did during one load run: where a request's time can go besides CPU. */
export interface TailSample {
  /** From the probe preloaded into the API (scripts/bench/probe.mjs). */
  api: {
    eventLoopDelayMs: { p50: number; p99: number; p999: number; max: number };
    gc: Record<string, { count: number; totalMs: number; maxMs: number }>;
    gcPauseMs: { p99: number; max: number } | null;
  } | null;
  /** Spins answered 200 as the API's own request histogram saw them (this run only). */
  apiTimed: { spins: number; meanMs: number; percentOver: Record<string, number> } | null;
  /** Group commits (the API's `outcomes_spin_batch_*` histograms, this run only). */
  batches: { count: number; meanSize: number; meanCommitMs: number; commitsOver: Record<string, number> } | null;
  /** pg_stat_activity of the bench database's active backends, sampled every 10 ms: share per wait. */
  postgresWaits: Record<string, number>;
  /** pg_stat_statements: the statements with the most total execution time. */
  statements: Array<{ query: string; calls: number; meanMs: number; totalMs: number }>;
}

/** Sums of a Prometheus histogram from the exposition text (the label sets containing `labels`). */
function histogram(
  text: string,
  name: string,
  labels = "",
): { buckets: Map<string, number>; sum: number; count: number } {
  const buckets = new Map<string, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || !line.includes(labels)) continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (line.startsWith(`${name}_bucket`)) {
      const le = /le="([^"]+)"/.exec(line)?.[1] ?? "";
      buckets.set(le, (buckets.get(le) ?? 0) + value);
    } else if (line.startsWith(`${name}_sum`)) sum += value;
    else if (line.startsWith(`${name}_count`)) count += value;
  }
  return { buckets, sum, count };
}

/**
 * Starts watching one run; `stop()` returns what was seen. Needs the API started with the probe
 * (`BENCH_PROBE_FILE`), and for the statements the pg_stat_statements extension in the bench
 * database (else that part stays empty).
 */
export async function tailSampler(
  api: { child: ChildProcess; metricsUrl: string; probeFile: string },
  sql: postgres.Sql,
  database: string,
): Promise<{ stop: () => Promise<TailSample> }> {
  const scrape = () =>
    fetch(`${api.metricsUrl}/metrics`).then(
      (response) => response.text(),
      () => "",
    );
  const probe = () => {
    api.child.kill("SIGUSR2");
    return new Promise((resolve) => setTimeout(resolve, 50));
  };
  await probe();
  const before = await scrape();
  // Counters diffed over the run (a reset would clear every database's statistics on a shared server).
  const readStatements = () =>
    sql<{ queryid: string; query: string; calls: string; total: number }[]>`
      select queryid::text, left(regexp_replace(query, '\s+', ' ', 'g'), 120) as query, calls,
        total_exec_time as total
      from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = ${database}`.catch(() => null);
  const statementsBefore = new Map((await readStatements())?.map((row) => [row.queryid, row]) ?? []);
  const waits = new Map<string, number>();
  let samples = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const rows = await sql<{ wait: string | null }[]>`
        select coalesce(wait_event_type || ':' || wait_event, 'CPU') as wait from pg_stat_activity
        where datname = ${database} and state = 'active' and pid <> pg_backend_pid()`;
      samples++;
      for (const { wait } of rows) waits.set(wait ?? "CPU", (waits.get(wait ?? "CPU") ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();

  return {
    stop: async () => {
      sampling = false;
      await sampler;
      await probe();
      const after = await scrape();
      let apiSample: TailSample["api"] = null;
      try {
        apiSample = JSON.parse(readFileSync(api.probeFile, "utf8"));
      } catch {}
      const since = (name: string, labels = "") => {
        const [earlier, later] = [histogram(before, name, labels), histogram(after, name, labels)];
        const bucket = (le: string) => (later.buckets.get(le) ?? 0) - (earlier.buckets.get(le) ?? 0);
        return { count: later.count - earlier.count, sum: later.sum - earlier.sum, bucket };
      };
      const size = since("outcomes_spin_batch_size");
      const commit = since("outcomes_spin_batch_seconds");
      const share = (n: number) => Math.round((n / Math.max(1, commit.count)) * 10000) / 100;
      // As the API timed them (`outcomes_http_request_duration_seconds`, from its first middleware to
      // the answer): what the load client adds (its own stalls, the sockets) is not in it.
      const served = since("outcomes_http_request_duration_seconds", 'route="/api/partner/v1/spins",status="200"');
      const servedOver = (le: string) =>
        Math.round(((served.count - served.bucket(le)) / Math.max(1, served.count)) * 10000) / 100;
      const apiTimed =
        served.count > 0
          ? {
              spins: served.count,
              meanMs: Math.round((served.sum / served.count) * 10000) / 10,
              percentOver: { "25ms": servedOver("0.025"), "50ms": servedOver("0.05"), "100ms": servedOver("0.1") },
            }
          : null;
      const batches =
        size.count > 0
          ? {
              count: size.count,
              meanSize: Math.round((size.sum / size.count) * 10) / 10,
              meanCommitMs: Math.round((commit.sum / commit.count) * 10000) / 10,
              commitsOver: Object.fromEntries(
                ["0.01", "0.025", "0.05"].map((le) => [
                  `${Number(le) * 1000}ms`,
                  share(commit.count - commit.bucket(le)),
                ]),
              ),
            }
          : null;
      const postgresWaits = Object.fromEntries(
        [...waits]
          .sort((a, b) => b[1] - a[1])
          .map(([wait, n]) => [wait, Math.round((n / Math.max(1, samples)) * 100) / 100]),
      );
      const statements = ((await readStatements()) ?? [])
        .map((row) => {
          const earlier = statementsBefore.get(row.queryid);
          const calls = Number(row.calls) - Number(earlier?.calls ?? 0);
          const totalMs = row.total - (earlier?.total ?? 0);
          return { query: row.query, calls, meanMs: Math.round((totalMs / Math.max(1, calls)) * 1000) / 1000, totalMs };
        })
        .filter((row) => row.calls > 0)
        .sort((a, b) => b.totalMs - a.totalMs)
        .slice(0, 5)
        .map((row) => ({ ...row, totalMs: Math.round(row.totalMs) }));
      return { api: apiSample, apiTimed, batches, postgresWaits, statements };
    },
  };
}
