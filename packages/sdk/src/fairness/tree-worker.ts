import { createRequire } from "node:module";
import { parentPort, workerData } from "node:worker_threads";
import type { Sha256Batch } from "./merkle.js";
import { blockTree, type TreeAnswer, type TreeJob, type TreeWorkerData } from "./tree.js";

/**
 * A worker thread that builds blocks' Merkle trees (`blockTree`), so a blocks worker draws the next
 * block while this one is hashed: two SHA-256 per entry, with the native batch hasher its starter
 * names (`TreeWorkerData`), else node:crypto. One `TreeAnswer` per `TreeJob`, in order.
 */
const data = workerData as TreeWorkerData | undefined;
const batch: Sha256Batch | undefined = data?.sha256BatchPath
  ? (createRequire(import.meta.url)(data.sha256BatchPath) as Sha256Batch)
  : undefined;

parentPort?.on("message", (job: TreeJob) => {
  let answer: TreeAnswer;
  try {
    answer = { id: job.id, tree: blockTree(job.input, job.fromLevel, batch) };
  } catch (error) {
    answer = { id: job.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort?.postMessage(answer);
});
