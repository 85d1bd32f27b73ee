"use strict";
// The native batch hasher (src/sha256_batch.c), built by `npm ci` where a C toolchain exists. Where
// it was not built or cannot load (no compiler, a Node without OpenSSL's symbols), `sha256Batch` is
// null and its callers hash with node:crypto: the same digests, about 3 times the CPU.
const path = require("node:path");

const built = path.join(__dirname, "build", "Release", "sha256_batch.node");
// Assigned one by one, so ES modules can import them by name (cjs-module-lexer).
exports.sha256Batch = null;
exports.modulePath = null;
exports.loadError = null;
try {
  exports.sha256Batch = require(built);
  exports.modulePath = built;
} catch (error) {
  exports.loadError = error instanceof Error ? error.message : String(error);
}
