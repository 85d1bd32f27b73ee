import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { PageAssets } from "./replay-page.js";

export const REPLAY_ASSETS = "/replay/assets";

interface Asset {
  url: string;
  body: Uint8Array<ArrayBuffer>;
  type: string;
}

/**
 * A file of the replay page, served by the service itself (CSP `default-src 'self'`). Beside this
 * module in the sources, beside the API's bundle in production (scripts/build.mjs copies them): both
 * are `new URL(file, import.meta.url)`. The URL carries a hash of the content, so browsers may keep
 * it for good and a new release's file is fetched at once.
 */
function load(file: string, type: string): Asset {
  const body = new Uint8Array(readFileSync(new URL(file, import.meta.url)));
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
  const [name, extension] = file.split(".") as [string, string];
  return { url: `${REPLAY_ASSETS}/${name}.${hash}.${extension}`, body, type };
}

let assets: { script: Asset; style: Asset } | undefined;

/** Read once, on first use. */
export function replayAssets(): { script: Asset; style: Asset; urls: PageAssets } {
  assets ??= {
    script: load("replay-check.js", "text/javascript; charset=utf-8"),
    style: load("replay.css", "text/css; charset=utf-8"),
  };
  return { ...assets, urls: { script: assets.script.url, style: assets.style.url } };
}

/** The asset at `path`, or undefined (a stale hash, a made-up name). */
export function replayAsset(path: string): Asset | undefined {
  const { script, style } = replayAssets();
  return [script, style].find((asset) => asset.url === path);
}
