import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './spawn-hookrun.js';

/** The version package.json names, read here rather than through src/: what the CLI and /openapi.json must report. */
export const PACKAGE_VERSION: string = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
