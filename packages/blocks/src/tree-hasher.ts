import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import {
  type BlockDraft,
  type DrawnBlock,
  draftWithTree,
  type OutcomeDrawer,
  STORED_FROM_LEVEL,
  treeInputOf,
} from "@outcomes/core";
import type { BlockTree, TreeAnswer, TreeJob } from "@outcomes/sdk";

type Pending = { resolve: (tree: BlockTree) => void; reject: (error: Error) => void };

/**
 * Builds blocks' Merkle trees on a worker thread (the SDK's `tree-worker`, the same `blockTree` a
 * verifier runs), so the blocks worker draws, seals and loads other blocks meanwhile: the tree is
 * most of a block's CPU (two SHA-256 per entry). One thread per process, started on first use and
 * kept; it holds the process open only while a tree is being built. A thread that dies fails the
 * trees it owed (their jobs are retried) and is replaced on the next use.
 */
class TreeHasher {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  build(job: Omit<TreeJob, "id">): Promise<BlockTree> {
    const worker = this.running();
    const id = this.nextId++;
    return new Promise<BlockTree>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ ...job, id } satisfies TreeJob);
    });
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(createRequire(import.meta.url).resolve("@outcomes/sdk/tree-worker"));
    worker.unref();
    worker.on("message", (answer: TreeAnswer) => {
      const waiting = this.pending.get(answer.id);
      this.pending.delete(answer.id);
      if (this.pending.size === 0) worker.unref();
      if (answer.error !== undefined) waiting?.reject(new Error(`Merkle tree worker: ${answer.error}`));
      else waiting?.resolve(answer.tree);
    });
    const fail = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`Merkle tree worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }
}

const hasher = new TreeHasher();

/** A drawn block with its commitments, its tree built on the tree worker thread. */
export async function draftOffThread(drawer: OutcomeDrawer, drawn: DrawnBlock, blockId: number): Promise<BlockDraft> {
  const tree = await hasher.build({ input: treeInputOf(drawer, drawn, blockId), fromLevel: STORED_FROM_LEVEL });
  return draftWithTree(drawn, blockId, tree);
}
