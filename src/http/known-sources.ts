import { AppError } from '../errors.js';
import { SOURCES } from '../webhooks/providers/index.js';

/** The project's custom senders, as far as the source filters need them (platform.json `webhooks`). */
export interface SourceConfig {
  customWebhooks?: ReadonlyArray<{ route: string }>;
}

/** Every source this project receives, so a filter accepts a platform.json sender's route as well as the shipped ones. */
export function knownSources(config: SourceConfig): string[] {
  return [...new Set([...SOURCES, ...(config.customWebhooks ?? []).map((w) => w.route)])];
}

/** A source filter checked against the project's sources, so a typo is a 400 naming the ones there are rather than an empty list. */
export function checkSource(source: string | undefined, known: readonly string[]): void {
  if (source !== undefined && !known.includes(source))
    throw new AppError('bad_request', `source "${source}" is not one this project receives; the sources are ${known.join(', ')}.`);
}
