import { createServer } from "node:http";

/**
 * The floor: a plain `node:http` server echoing a JSON POST (read the body, parse it, answer it
 * re-serialised), its own process. No framework, no I/O: what one request costs Node itself.
 */
createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    const body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"));
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
