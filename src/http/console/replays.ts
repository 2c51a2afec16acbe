import type { Hono } from 'hono';
import type { AdminApiDeps } from '../admin.js';

/** The Replays page's routes (not built yet: the navigation links to it). */
export function addReplayPages(_app: Hono, _deps: AdminApiDeps): void {}
