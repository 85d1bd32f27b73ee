// The replay page's check (CONTRACT §17, docs/fairness.md "Replay pages"), run by the viewer's own
// browser with Web Crypto: the leaf from the outcome shown, the audit path to the block's committed
// Merkle root (RFC 9162), and once the block is revealed, its seed against the committed seed hash
// and the salt against the seed. The same rules as the SDK's `verifySpinProof`, written for the
// browser. It reads nothing but the page itself (never the address bar), and says what it found.

function showLocalTime(iso) {
  const target = document.getElementById("local-time");
  if (!target) return;
  const when = new Date(iso);
  target.textContent = when.toLocaleString(undefined, { dateStyle: "long", timeStyle: "long" });
  target.closest(".local-time")?.removeAttribute("hidden");
}

const encoder = new TextEncoder();
const hexOf = (bytes) => Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, "0")).join("");
const bytesOf = (hex) => {
  if (!/^([0-9a-f]{2})*$/.test(hex)) throw new Error(`"${hex}" is not lowercase hex`);
  return Uint8Array.from(hex.match(/../g) || [], (pair) => Number.parseInt(pair, 16));
};
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};
const sha256 = async (...parts) => new Uint8Array(await crypto.subtle.digest("SHA-256", concat(...parts)));
const short = (hex) => `${hex.slice(0, 12)}…`;

/** The leaf's text: `blockId|index|tier|multiplier|reels` (multiplier: shortest exact decimal). */
function outcomeText(blockId, index, outcome, reelSymbols) {
  const multiplier = outcome.multiplier.toFixed(6).replace(/\.?0+$/, "");
  const reels = reelSymbols.map((reel) => reel.join(",")).join("/");
  return `${blockId}|${index}|${outcome.prizeTier}|${multiplier}|${reels}`;
}

/** The reels and tier the page shows (its table), reel by reel, top to bottom. */
function shownOutcome() {
  const table = document.getElementById("reels");
  const reels = [];
  for (const row of table.tBodies[0].rows) {
    row.querySelectorAll("td").forEach((cell, reel) => {
      reels[reel] = [...(reels[reel] || []), cell.dataset.symbol];
    });
  }
  return { tier: table.dataset.tier, reels };
}

/** RFC 9162 §2.1.3.2: the root the audit path leads to from leaf `index` of `treeSize`, or null. */
async function rootFromPath(leaf, index, treeSize, path) {
  let fn = index;
  let sn = treeSize - 1;
  let node = leaf;
  for (const sibling of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      node = await sha256(Uint8Array.of(1), sibling, node);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      node = await sha256(Uint8Array.of(1), node, sibling);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? node : null;
}

/** The salt of cycle position q: AES-256(seed, u32be(3) ‖ u32be(0) ‖ u64be(q)), the DRBG's stream 3. */
async function saltOf(seed, position) {
  const key = await crypto.subtle.importKey("raw", seed, { name: "AES-CTR" }, false, ["encrypt"]);
  const counter = new Uint8Array(16);
  const view = new DataView(counter.buffer);
  view.setUint32(0, 3);
  view.setBigUint64(8, BigInt(position));
  return new Uint8Array(await crypto.subtle.encrypt({ name: "AES-CTR", counter, length: 64 }, key, new Uint8Array(16)));
}

async function check(replay) {
  if (!globalThis.crypto?.subtle) {
    return [{ ok: false, text: "This browser offers no Web Crypto here (the page must be served over HTTPS)." }];
  }
  const { proof, block, fairness, outcome, presentation } = replay;
  const steps = [];
  const step = (ok, text) => {
    steps.push({ ok, text });
    return ok;
  };

  const shown = shownOutcome();
  const sameReels = JSON.stringify(shown.reels) === JSON.stringify(presentation.reelSymbols);
  if (
    !step(
      sameReels && shown.tier === outcome.prizeTier,
      sameReels && shown.tier === outcome.prizeTier
        ? "The reels and tier shown above are the outcome this page checks."
        : "The reels or tier shown above are not the outcome in this page's data.",
    )
  )
    return steps;

  const text = outcomeText(fairness.blockId, fairness.index, outcome, presentation.reelSymbols);
  const sameText = proof.blockId === fairness.blockId && proof.index === fairness.index && proof.outcomeText === text;
  if (
    !step(
      sameText,
      sameText
        ? `The outcome, written as the leaf commits to it, is "${text}": the proof's outcome text.`
        : `The outcome shown, written as the leaf commits to it, is "${text}", but the proof is of "${proof.outcomeText}" (entry ${proof.index} of block ${proof.blockId}).`,
    )
  )
    return steps;

  const leaf = await sha256(Uint8Array.of(0), bytesOf(proof.salt), encoder.encode(text));
  const sameLeaf = hexOf(leaf) === proof.leaf;
  if (
    !step(
      sameLeaf,
      sameLeaf
        ? `Its leaf, SHA-256(0x00 ‖ salt ‖ outcome text), is ${short(proof.leaf)}, as the proof says.`
        : `Its leaf, SHA-256(0x00 ‖ salt ‖ outcome text), is ${short(hexOf(leaf))}, not the proof's ${short(proof.leaf)}.`,
    )
  )
    return steps;

  const root =
    proof.treeSize === block.size && proof.merkleRoot === block.merkleRoot
      ? await rootFromPath(leaf, proof.index, proof.treeSize, proof.auditPath.map(bytesOf))
      : null;
  const included = root !== null && hexOf(root) === block.merkleRoot;
  if (
    !step(
      included,
      included
        ? `The audit path of ${proof.auditPath.length} hashes leads from that leaf to the block's committed Merkle root ${short(block.merkleRoot)}: the outcome is entry ${proof.index} of the ${block.size} the block committed to.`
        : `The audit path does not lead from that leaf to the block's committed Merkle root ${short(block.merkleRoot || "")}.`,
    )
  )
    return steps;

  const sealedFirst = Date.parse(block.sealedAt) <= Date.parse(replay.createdAt);
  if (
    !step(
      sealedFirst,
      sealedFirst
        ? "The block was sealed, its root published, before this spin was played."
        : "The block's seal time is after the spin.",
    )
  )
    return steps;

  if (block.seed === null) {
    steps.push({
      ok: null,
      text: "The block's seed is not revealed yet (it is, once every entry of the block has been played): open this page again then to check the seed too.",
    });
    return steps;
  }
  const seed = bytesOf(block.seed);
  const seedHashOk = seed.length === 32 && hexOf(await sha256(seed)) === block.seedHash;
  if (
    !step(
      seedHashOk,
      seedHashOk
        ? `The revealed seed hashes to the seed hash committed at sealing (${short(block.seedHash)}).`
        : "The revealed seed does not hash to the seed hash committed at sealing.",
    )
  )
    return steps;
  const salt = hexOf(await saltOf(seed, (block.cycle?.offset ?? 0) + proof.index));
  step(
    salt === proof.salt,
    salt === proof.salt
      ? "The leaf's salt is the one the seed derives for this entry."
      : "The leaf's salt is not the one the seed derives for this entry.",
  );
  return steps;
}

function render(box, steps) {
  const failed = steps.find((s) => s.ok === false);
  box.dataset.result = failed ? "failed" : "verified";
  box.className = `check ${failed ? "failed" : "verified"}`;
  const summary = document.createElement("p");
  summary.className = "check-summary";
  summary.textContent = failed
    ? "Check failed: this outcome could not be shown to be the committed one."
    : "Verified in your browser: this outcome was committed before the spin, and is the one shown.";
  const list = document.createElement("ol");
  list.className = "check-steps";
  for (const { ok, text } of steps) {
    const item = document.createElement("li");
    item.className = ok === true ? "ok" : ok === false ? "fail" : "info";
    const mark = document.createElement("span");
    mark.className = "mark";
    mark.setAttribute("aria-hidden", "true");
    mark.textContent = ok === true ? "✓" : ok === false ? "✗" : "i";
    // The mark is for the eye; a screen reader hears the verdict in words.
    const verdict = document.createElement("span");
    verdict.className = "visually-hidden";
    verdict.textContent = ok === true ? "Passed: " : ok === false ? "Failed: " : "Note: ";
    const words = document.createElement("span");
    words.append(verdict, text);
    item.append(mark, words);
    list.append(item);
  }
  box.replaceChildren(summary, list);
}

(() => {
  const data = document.getElementById("replay-data");
  if (!data) return;
  const replay = JSON.parse(data.textContent || "null");
  showLocalTime(replay.createdAt);
  const box = document.getElementById("check");
  if (!box) return;
  check(replay).then(
    (steps) => render(box, steps),
    (error) => render(box, [{ ok: false, text: `The check could not run: ${error.message}` }]),
  );
})();
