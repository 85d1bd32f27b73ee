import { serve } from "@hono/node-server";
import { Hono } from "hono";

/**
 * The baseline: a Hono hello-world route on the same server adapter as the API, started the same
 * way (its own process), so the ratio spins/s ÷ hello/s says what the spin path itself costs.
 */
const app = new Hono().get("/hello", (c) => c.json({ hello: "world" }));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" });
