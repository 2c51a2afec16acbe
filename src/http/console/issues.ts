import type { Hono } from 'hono';
import type { AdminApiDeps } from '../admin.js';

/** The Issues page's routes (not built yet: the navigation links to it). */
export function addIssuePages(_app: Hono, _deps: AdminApiDeps): void {}
