export * from "./fill.js";
export * from "./outcome-list.js";
export * from "./recovery.js";
export * from "./report.js";
export * from "./reveal.js";
export * from "./seal.js";
export * from "./tree-hasher.js";
