import type { Queryable } from '../db/database.js';
import { pausedHandlerNames } from '../flow/controls.js';
import type { HandlerRegistry } from '../deliveries/registry.js';

/**
 * Which handlers the inbox runs inline (no flow options, not paused), kept
 * up to date with the pauses every instance shares: re-read at most once per
 * `pollIntervalMs`, so a pause holds on every instance within it.
 */
export class HandlerLanes {
  private paused: ReadonlySet<string> = new Set();
  private inline: readonly string[];
  private lastRead = -Infinity;

  constructor(
    private readonly handlers: HandlerRegistry,
    private readonly pollIntervalMs: number,
  ) {
    this.inline = this.inlineNames();
  }

  /** Re-read the pauses if they are older than the poll interval (`force`: now). */
  async refresh(db: Queryable, force = false): Promise<void> {
    const now = performance.now();
    if (!force && now - this.lastRead < this.pollIntervalMs) return;
    this.lastRead = now;
    this.paused = new Set(await pausedHandlerNames(db));
    this.inline = this.inlineNames();
  }

  /** The inline handlers not paused, and the paused ones. */
  current(): { inline: readonly string[]; paused: ReadonlySet<string> } {
    return { inline: this.inline, paused: this.paused };
  }

  private inlineNames(): string[] {
    return this.handlers.names().filter((name) => this.handlers.byName(name)?.flow === undefined && !this.paused.has(name));
  }
}
