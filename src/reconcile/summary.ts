/** What a reconcile found, for the CLI (text or `--json`), the admin API and a job's log: the same shape for every sender. */
export interface ReconcileSummary {
  since: string;
  /** What the sender's API listed in the window (events, deliveries, or users and organizations). */
  found: number;
  /** Missing from the inbox and now stored (the worker processes them); for GitHub: redeliveries GitHub was asked for. */
  added: number;
  alreadyStored: number;
  /** Keys of the added ones (event ids, delivery GUIDs), oldest first, at most 100. */
  addedIds: string[];
}

/** The running counts a reconcile reports while it lists and stores (the CLI's progress line on a terminal). */
export type ReconcileProgress = (counts: { found: number; added: number }) => void;

/** At most this many keys in `addedIds`: a summary stays readable; `added` has the count. */
export const MAX_ADDED_IDS = 100;
