import { readFileSync } from "node:fs";

/** Linux clock ticks per second (USER_HZ), 100 on every mainstream kernel. */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (user + system, ms) a process has used so far, from /proc; null where there is no /proc.
 * CPU per request is what the service itself costs, and unlike requests/s it hardly moves when other
 * work shares the machine.
 */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** CPU time so far of each of some processes (those /proc cannot read are left out). */
export function cpuOfPids(pids: readonly number[]): Map<number, number> {
  const each = new Map<number, number>();
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (ms !== null) each.set(pid, ms);
  }
  return each;
}

/**
 * CPU ms used between two readings of `cpuOfPids` over a changing set of processes, by those in
 * both (one that started or ended meanwhile is left out: a pool's connections are open by then,
 * and the connection a listing runs on may not list itself). Null when none was in both.
 */
export function cpuSince(before: Map<number, number>, after: Map<number, number>): number | null {
  let ms = 0;
  let both = 0;
  for (const [pid, now] of after) {
    const then = before.get(pid);
    if (then === undefined) continue;
    ms += now - then;
    both++;
  }
  return both > 0 ? ms : null;
}

/** The 1-minute load average: above the core count, other work competed with the benchmark. */
export function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ")[0] ?? "?";
  } catch {
    return "?";
  }
}
