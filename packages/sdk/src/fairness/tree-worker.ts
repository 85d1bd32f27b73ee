import { parentPort } from "node:worker_threads";
import { blockTree, type TreeAnswer, type TreeJob } from "./tree.js";

/**
 * A worker thread that builds blocks' Merkle trees (`blockTree`), so a blocks worker draws the next
 * block while this one is hashed: two SHA-256 per entry, whose cost is mostly the call into
 * OpenSSL, not the hashing. One `TreeAnswer` per `TreeJob`, in order.
 */
parentPort?.on("message", (job: TreeJob) => {
  let answer: TreeAnswer;
  try {
    answer = { id: job.id, tree: blockTree(job.input, job.fromLevel) };
  } catch (error) {
    answer = { id: job.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  parentPort?.postMessage(answer);
});
