import { inject } from "vitest";
import type {} from "./cluster-setup.js";

// Setup file of the `*-cluster` projects: every test file, and the processes its tests start, use
// the run's Redis Cluster (REDIS_CLUSTER_NODES) instead of REDIS_URL.
process.env.REDIS_CLUSTER_NODES = inject("redisClusterNodes");
