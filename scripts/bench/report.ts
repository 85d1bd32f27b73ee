import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export interface LatencyPoint {
  label: string;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
}

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 64, right: 24, top: 40, bottom: 56 };
const SERIES = [
  { key: "p50Ms", name: "p50", color: "#1f77b4" },
  { key: "p99Ms", name: "p99", color: "#ff7f0e" },
  { key: "p999Ms", name: "p99.9", color: "#d62728" },
] as const;

/** A round axis maximum (1, 2 or 5 × a power of ten) at or above `value`. */
function niceMax(value: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(value, 1e-9)));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;");

/** Latency percentiles against throughput, one line per percentile: hand-written SVG, no dependencies. */
export function latencySvg(title: string, points: LatencyPoint[]): string {
  const sorted = [...points].sort((a, b) => a.perSecond - b.perSecond);
  const xMax = niceMax(Math.max(...sorted.map((p) => p.perSecond)) * 1.05);
  const yMax = niceMax(Math.max(...sorted.map((p) => p.p999Ms)) * 1.05);
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (v: number) => MARGIN.left + (v / xMax) * plotW;
  const y = (v: number) => MARGIN.top + plotH - (v / yMax) * plotH;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const xv = (xMax / 5) * i;
    const yv = (yMax / 5) * i;
    parts.push(
      `<line x1="${x(xv)}" y1="${MARGIN.top}" x2="${x(xv)}" y2="${MARGIN.top + plotH}" stroke="#eee"/>`,
      `<text x="${x(xv)}" y="${MARGIN.top + plotH + 16}" text-anchor="middle">${Math.round(xv)}</text>`,
      `<line x1="${MARGIN.left}" y1="${y(yv)}" x2="${MARGIN.left + plotW}" y2="${y(yv)}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 6}" y="${y(yv) + 4}" text-anchor="end">${+yv.toPrecision(3)}</text>`,
    );
  }
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">spins/s (load)</text>`,
    `<text x="16" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${MARGIN.top + plotH / 2})">latency (ms)</text>`,
  );
  SERIES.forEach((series, i) => {
    const path = sorted.map((p) => `${x(p.perSecond).toFixed(1)},${y(p[series.key]).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${path}" fill="none" stroke="${series.color}" stroke-width="2"/>`);
    for (const p of sorted) {
      parts.push(`<circle cx="${x(p.perSecond)}" cy="${y(p[series.key])}" r="3" fill="${series.color}"/>`);
    }
    const lx = MARGIN.left + 12 + i * 80;
    parts.push(
      `<line x1="${lx}" y1="${MARGIN.top + 12}" x2="${lx + 18}" y2="${MARGIN.top + 12}" stroke="${series.color}" stroke-width="2"/>`,
      `<text x="${lx + 22}" y="${MARGIN.top + 16}">${series.name}</text>`,
    );
  });
  for (const p of sorted) {
    parts.push(
      `<text x="${x(p.perSecond)}" y="${MARGIN.top + plotH - 6}" text-anchor="middle" fill="#666">${escapeXml(p.label)}</text>`,
    );
  }
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}

export function writeSvg(path: string, svg: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, svg);
}
