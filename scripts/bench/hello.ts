import { serve } from "@hono/node-server";
import { Hono } from "hono";

/**
 * The framework baseline, on the same server adapter as the API and started the same way (its own
 * process): a hello-world GET and the smallest JSON POST echo through `c.req.json()`.
 */
const app = new Hono()
  .get("/hello", (c) => c.json({ hello: "world" }))
  .post("/echo", async (c) => c.json(await c.req.json()));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: "127.0.0.1" });
