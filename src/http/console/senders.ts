import type { Hono } from 'hono';
import type { AdminApiDeps } from '../admin.js';

/** The Senders page's routes (not built yet: the navigation links to it). */
export function addSenderPages(_app: Hono, _deps: AdminApiDeps): void {}
