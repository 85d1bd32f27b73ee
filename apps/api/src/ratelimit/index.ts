// The middleware (./middleware.js) is imported by the app alone.
export * from "./draws.js";
export * from "./gcra.js";
export * from "./limiter.js";
