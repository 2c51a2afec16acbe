import { createRequire } from 'node:module';

/**
 * The installed hookrun's version, read from its own package.json (src/ and dist/ both sit one level below it): what
 * `hookrun --version`, the cron User-Agent and /openapi.json report, so an operator can tell which release answers.
 */
export const HOOKRUN_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
