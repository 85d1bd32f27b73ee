export * from "./webhook-signature.js";
