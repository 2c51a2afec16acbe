import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where the reliability tests append the figures docs/reliability.md quotes (one JSON object per line). */
export const FIGURES_FILE = process.env.RELIABILITY_FIGURES_FILE ?? join(tmpdir(), 'hookrun-reliability-figures.jsonl');

/** Record the figures of one guarantee's run (events sent, crashes, lost, duplicates, cases). */
export function reportFigures(guarantee: string, figures: Record<string, unknown>): void {
  const line = JSON.stringify({ at: new Date().toISOString(), guarantee, ...figures });
  appendFileSync(FIGURES_FILE, `${line}\n`);
  console.log(`[reliability] ${line}`);
}
