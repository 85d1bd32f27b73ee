import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

/** A stream for the logger to write to, and the lines written to it. */
function lineSink() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, sink };
}

describe("error logging", () => {
  it("drops a failed query's bound parameters from the error's fields, message and stack", () => {
    const { lines, sink } = lineSink();
    const error = Object.assign(new Error("Failed query: select 1 where key_hash = $1\nparams: 54d6a414ae21,1"), {
      query: "select 1 where key_hash = $1",
      params: ["54d6a414ae21", 1],
    });
    createLogger("info", "test", sink).error({ err: error }, "request failed");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("54d6a414ae21");
    const logged = JSON.parse(lines[0]!);
    expect(logged.err.message).toBe("Failed query: select 1 where key_hash = $1\nparams: [redacted]");
    expect(logged.err.query).toBe("select 1 where key_hash = $1");
    expect(logged.err.params).toBeUndefined();
  });

  it("drops the arguments of a failed Redis command, keeping its name", () => {
    const { lines, sink } = lineSink();
    // What ioredis rejects a command with when its connection closes (redis/event_handler.js).
    const error = Object.assign(new Error("Command aborted due to connection close"), {
      command: { name: "zscore", args: ["ks:issued-api-keys", "9f86d081884c7d65"] },
    });
    createLogger("info", "test", sink).warn({ err: error }, "throttle unavailable");
    expect(lines[0]).not.toContain("9f86d081884c7d65");
    expect(JSON.parse(lines[0]!).err.command).toEqual({ name: "zscore" });
  });
});
