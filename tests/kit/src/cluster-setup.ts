import type { TestProject } from "vitest/node";
import { startLocalCluster } from "./redis-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** REDIS_CLUSTER_NODES of the cluster the `*-cluster` projects run against. */
    redisClusterNodes: string;
  }
}

/**
 * Global setup of the `*-cluster` vitest projects: a local Redis Cluster (scripts/redis-cluster.sh)
 * for this run, handed to that project's test files only (cluster-env.ts), so the other projects
 * of the same run keep their single Redis.
 */
export default async function setup(project: TestProject) {
  const cluster = await startLocalCluster();
  project.provide("redisClusterNodes", cluster.nodes);
  return () => cluster.stop();
}
