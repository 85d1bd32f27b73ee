import { formatScaledDecimal, usdToMicros } from "@outcomes/core";
import type { ReplayBody } from "@outcomes/records";
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

// The replay page (CONTRACT §17), rendered on the server from the same facts as its JSON: readable
// without JavaScript; the check script (replay-check.js) only adds the local time and the check.

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export interface PageAssets {
  script: string;
  style: string;
}

/** USD exactly, with at least 2 decimals (at most the 6 money keeps), grouped: `$1,234.50`, `−$0.000001`. */
export function formatUsd(amount: number): string {
  // Through integer micro-USD: `toFixed` would round the last digit of amounts past ~10^9 USD.
  const [whole = "0", fraction = ""] = formatScaledDecimal(usdToMicros(Math.abs(amount)) ?? 0).split(".");
  const kept = fraction.padEnd(2, "0");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${amount < 0 ? "−" : ""}$${grouped}.${kept}`;
}

/** The multiplier as the leaf writes it (shortest exact decimal), after a `×`. */
export const formatMultiplier = (multiplier: number) => `×${multiplier.toFixed(6).replace(/\.?0+$/, "")}`;

/** `2026-11-28 14:03:07 UTC` from an ISO timestamp. */
export const formatUtc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

const JSON_ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** JSON inside `<script type="application/json">`: nothing in it can close the element or start markup. */
function embeddedJson(value: unknown): HtmlEscapedString {
  return raw(JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (char) => JSON_ESCAPES[char] as string));
}

function layout(title: string, assets: PageAssets | null, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="robots" content="noindex" />
    <title>${title}</title>
    ${assets ? html`<link rel="stylesheet" href="${assets.style}" />` : ""}
    ${assets ? html`<script src="${assets.script}" defer></script>` : ""}
  </head>
  <body>
    ${body}
  </body>
</html>
`;
}

function verdict(replay: ReplayBody): { label: string; tone: string } {
  if (replay.voided) return { label: "Voided", tone: "voided" };
  if (replay.outcome.payoutUsd > 0) return { label: `Won ${formatUsd(replay.outcome.payoutUsd)}`, tone: "won" };
  return { label: "No win", tone: "lost" };
}

function reels(replay: ReplayBody): Html {
  const { reelSymbols, animationHints } = replay.presentation;
  const symbols = new Map(replay.game.symbols.map((symbol, order) => [symbol.id, { name: symbol.name, order }]));
  const rows = reelSymbols[0]?.length ?? 0;
  const payline = Math.floor(rows / 2);
  const rowName = (row: number) => (row === payline ? "Payline" : `Row ${row + 1}`);
  return html`<table class="reels" id="reels" data-tier="${replay.outcome.prizeTier}">
    <caption>
      The reels as they stopped: one column per reel, the payline is the middle row${
        animationHints.winLine ? html`; the winning symbols are marked` : ""
      }
    </caption>
    <thead>
      <tr>
        <td></td>
        ${reelSymbols.map((_, reel) => html`<th scope="col">Reel ${reel + 1}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${Array.from({ length: rows }, (_, row) => {
        return html`<tr class="${row === payline ? "payline" : ""}">
          <th scope="row">${rowName(row)}</th>
          ${reelSymbols.map((reel, reelIndex) => {
            const id = reel[row] ?? "";
            const symbol = symbols.get(id);
            const hit = animationHints.highlight[reelIndex]?.[row] === true;
            return html`<td data-symbol="${id}" class="${hit ? "hit" : ""}">
              <span class="symbol tone-${(symbol?.order ?? 0) % 8}">
                <span class="symbol-name">${symbol?.name ?? id}</span>
                <span class="symbol-id">${id}</span>
                ${hit ? html`<span class="visually-hidden">(winning)</span>` : ""}
              </span>
            </td>`;
          })}
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function figures(replay: ReplayBody): Html {
  const { outcome } = replay;
  return html`<dl class="figures">
    <div>
      <dt>Played</dt>
      <dd><time datetime="${replay.createdAt}">${formatUtc(replay.createdAt)}</time></dd>
    </div>
    <div class="local-time" hidden>
      <dt>Your local time</dt>
      <dd id="local-time"></dd>
    </div>
    <div>
      <dt>Wager</dt>
      <dd>${formatUsd(replay.wagerUsd)}${replay.freeRound ? " (a free round: paid by the operator)" : ""}</dd>
    </div>
    <div>
      <dt>Prize tier</dt>
      <dd>${outcome.prizeTier}</dd>
    </div>
    <div>
      <dt>Multiplier</dt>
      <dd>${formatMultiplier(outcome.multiplier)}</dd>
    </div>
    <div>
      <dt>Payout</dt>
      <dd>${formatUsd(outcome.payoutUsd)}</dd>
    </div>
    <div>
      <dt>Balance after</dt>
      <dd>${formatUsd(replay.balance.balanceUsd)}${replay.voided ? " (before the void, which reversed this spin)" : ""}</dd>
    </div>
    <div>
      <dt>Status</dt>
      <dd>${
        replay.voided
          ? html`Voided on ${formatUtc(replay.voided.voidedAt)}: ${replay.voided.reason}`
          : replay.freeRound
            ? "Free round, stands"
            : "Stands"
      }</dd>
    </div>
  </dl>`;
}

function fairness(replay: ReplayBody): Html {
  const { proof, block } = replay;
  if (replay.forced) {
    return html`<p>
      This sandbox spin's outcome was forced for a test (tier ${replay.outcome.prizeTier} on demand): it was drawn for
      this spin alone, not taken from a committed block, so it has no proof to check.
    </p>`;
  }
  if (!proof || !block) {
    return html`<p>
      This spin's block was sealed before provable fairness existed: it has no Merkle tree, so no proof to check.
    </p>`;
  }
  return html`<p>
      The outcome is entry ${proof.index} of block ${proof.blockId}. The block's Merkle root, which commits to every
      entry, was published when the block was sealed (${formatUtc(block.sealedAt)}), before any of its entries was
      played.
    </p>
    <div id="check" class="check" role="status" aria-live="polite">
      <p class="check-summary">
        Your browser checks the proof when JavaScript is on. The data below lets anyone check it with the SDK or the
        steps in the fairness documentation.
      </p>
    </div>
    <details>
      <summary>Proof data</summary>
      <dl class="proof">
        <div><dt>Outcome text</dt><dd><code>${proof.outcomeText}</code></dd></div>
        <div><dt>Salt</dt><dd><code>${proof.salt}</code></dd></div>
        <div><dt>Leaf</dt><dd><code>${proof.leaf}</code></dd></div>
        <div>
          <dt>Audit path (${proof.auditPath.length} hashes, leaf to root)</dt>
          <dd>${proof.auditPath.map((node) => html`<code>${node}</code> `)}</dd>
        </div>
        <div><dt>Merkle root (committed)</dt><dd><code>${block.merkleRoot ?? ""}</code></dd></div>
        <div><dt>Tree size</dt><dd>${proof.treeSize}</dd></div>
        <div><dt>Seed hash (committed)</dt><dd><code>${block.seedHash ?? ""}</code></dd></div>
        <div>
          <dt>Seed</dt>
          <dd>${block.seed ? html`<code>${block.seed}</code>` : "Not revealed yet: it is shown once every entry of the block has been played"}</dd>
        </div>
      </dl>
    </details>`;
}

/** The page of a spin; `dataPath` is its JSON's address. */
export function replayPage(replay: ReplayBody, assets: PageAssets, dataPath: string): Html {
  const { label, tone } = verdict(replay);
  return layout(
    `Spin replay: ${replay.game.name}`,
    assets,
    html`<main>
      <header class="top">
        <p class="eyebrow">Spin replay${replay.environment === "sandbox" ? " · sandbox (test)" : ""}</p>
        <h1>${replay.game.name}</h1>
        <p class="verdict ${tone}">${label}</p>
        <ul class="badges">
          ${replay.freeRound ? html`<li>Free round</li>` : ""}
          ${replay.forced ? html`<li>Forced test outcome</li>` : ""}
        </ul>
      </header>
      <section aria-labelledby="reels-title" class="card">
        <h2 id="reels-title">Reels</h2>
        ${reels(replay)}
      </section>
      <section aria-labelledby="figures-title" class="card">
        <h2 id="figures-title">The spin</h2>
        ${figures(replay)}
      </section>
      <section aria-labelledby="fairness-title" class="card">
        <h2 id="fairness-title">Fairness check</h2>
        ${fairness(replay)}
      </section>
      <footer class="foot">
        <p>
          Spin <code>${replay.spinId}</code>. This link works until ${formatUtc(replay.expiresAt)}.
          <a href="${dataPath}">This spin and its proof as JSON</a>.
        </p>
      </footer>
      <script type="application/json" id="replay-data">${embeddedJson(replay)}</script>
    </main>`,
  );
}

/** A page that says only why no replay is shown: a heading and one paragraph under the replay's header. */
function messagePage(assets: PageAssets, page: { title: string; heading: string; message: string }): Html {
  const { title, heading, message } = page;
  return layout(
    title,
    assets,
    html`<main>
      <header class="top">
        <p class="eyebrow">Spin replay</p>
        <h1>${heading}</h1>
      </header>
      <section class="card">
        <p>${message}</p>
      </section>
    </main>`,
  );
}

/** The one page of every link that opens nothing: expired, altered and unknown alike. */
export function notFoundPage(assets: PageAssets): Html {
  return messagePage(assets, {
    title: "Replay not found",
    heading: "This replay link does not work",
    message: "It may have expired, or been copied incompletely. Ask whoever gave it to you for a new one.",
  });
}

export function tooManyRequestsPage(assets: PageAssets, retryAfterSeconds: number): Html {
  return messagePage(assets, {
    title: "Too many requests",
    heading: "Too many requests",
    message: `Too many replay pages were opened from your address. Try again in ${retryAfterSeconds} seconds.`,
  });
}
