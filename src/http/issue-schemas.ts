import { z } from 'zod';
import { ISSUE_STATUSES } from '../issues/issue-types.js';

/** `GET /api/issues`: a status (default open) and a page size. */
export const issueListQuery = z.object({
  status: z.enum(ISSUE_STATUSES).default('open').describe('only issues in this status (default open)'),
  limit: z.coerce.number().int().min(1).max(200).default(100).describe('how many, most recently seen first'),
});
