#!/usr/bin/env node
import { processIo } from './cli/io.js';
import { run } from './cli/run.js';

/**
 * The `hookrun` bin: the CLI (cli/run.ts) on this process's io. A command that
 * failed by throwing exits at once; one that set a soft failure exits with it
 * once its work (open handles, a running server) is done.
 */
const outcome = await run(process.argv.slice(2), processIo());
if (outcome.failed) process.exit(outcome.code);
if (outcome.code !== 0) process.exitCode = outcome.code;
