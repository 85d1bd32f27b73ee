// The middleware (./middleware.js) is imported by the app alone: it reads the request context,
// which the rest of the API reads the buckets from.
export * from "./buckets.js";
export * from "./gcra.js";
export * from "./spin-take.js";
