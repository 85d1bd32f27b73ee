import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import {
  type BlockDraft,
  type DrawnBlock,
  draftWithTree,
  type OutcomeDrawer,
  STORED_FROM_LEVEL,
  treeInputOf,
} from "@outcomes/core";
import type { BlockTree, TreeAnswer, TreeJob, TreeWorkerData } from "@outcomes/sdk";
import { loadError, modulePath } from "@outcomes/sha256-batch";

type Pending = { resolve: (tree: BlockTree) => void; reject: (error: Error) => void };

/**
 * Builds blocks' Merkle trees on worker threads (the SDK's `tree-worker`, the same `blockTree` a
 * verifier runs), so the blocks worker draws, seals and loads other blocks meanwhile: the tree is
 * most of a block's CPU (two SHA-256 per entry), hashed in batches by the native hasher
 * (`@outcomes/sha256-batch`) where it is built, else one node:crypto call per hash. Up to
 * TREE_THREADS threads, started on first use and kept; a tree goes to the thread with the fewest
 * pending. A thread holds the process open only while it owes a tree; one that dies fails the trees
 * it owed (their jobs are retried) and is replaced on the next use.
 *
 * One core is left to the main thread (it draws, writes the RPUSH commands and feeds Postgres a
 * block's 280 kB statement, which stalls while it is busy): on 2 cores one tree thread, which keeps
 * pace with the seals (~3 ms per 10,000-entry tree), filled 4 × 10,000 faster than two in
 * interleaved runs (989,000–1,171,000 against 790,000–1,063,000 outcomes/s).
 */
const TREE_THREADS = Math.max(1, Math.min(2, availableParallelism() - 1));

class TreeThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  dead = false;

  constructor() {
    this.worker = new Worker(createRequire(import.meta.url).resolve("@outcomes/sdk/tree-worker"), {
      workerData: { sha256BatchPath: modulePath } satisfies TreeWorkerData,
    });
    this.worker.unref();
    this.worker.on("message", (answer: TreeAnswer) => {
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) this.worker.unref();
      if (answer.error !== undefined) waiting?.reject(new Error(`Merkle tree worker: ${answer.error}`));
      else waiting?.resolve(answer.tree);
    });
    const fail = (error: Error) => {
      this.dead = true;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    this.worker.on("error", fail);
    this.worker.on("exit", (code) => fail(new Error(`Merkle tree worker exited with code ${code}`)));
  }

  get load(): number {
    return this.pending.size;
  }

  build(job: Omit<TreeJob, "id">): Promise<BlockTree> {
    const id = this.nextId++;
    return new Promise<BlockTree>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) this.worker.ref();
      this.worker.postMessage({ ...job, id } satisfies TreeJob);
    });
  }
}

/** How the tree threads hash, for a worker's start-up log: the native batch hasher, or why not. */
export const treeHashing = modulePath
  ? { hasher: "native batch (@outcomes/sha256-batch)" }
  : { hasher: "node:crypto, one call per hash (@outcomes/sha256-batch not loaded)", reason: loadError };

const threads: TreeThread[] = [];

function leastLoadedThread(): TreeThread {
  for (let index = threads.length - 1; index >= 0; index--) if (threads[index]?.dead) threads.splice(index, 1);
  const idle = threads.find((thread) => thread.load === 0);
  if (idle) return idle;
  if (threads.length < TREE_THREADS) {
    const thread = new TreeThread();
    threads.push(thread);
    return thread;
  }
  return threads.reduce((best, thread) => (thread.load < best.load ? thread : best));
}

/** A drawn block with its commitments, its tree built on a tree worker thread. */
export async function draftOffThread(drawer: OutcomeDrawer, drawn: DrawnBlock, blockId: number): Promise<BlockDraft> {
  const tree = await leastLoadedThread().build({
    input: treeInputOf(drawer, drawn, blockId),
    fromLevel: STORED_FROM_LEVEL,
  });
  return draftWithTree(drawn, blockId, tree);
}
