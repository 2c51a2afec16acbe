import { shortTime } from './output.js';

/** How many frames of an attempt's stack `events show` prints: the first ones, the project's own (deliveries/stack.ts puts them first). */
const STACK_FRAMES_SHOWN = 3;

/** One attempt (or replay) as the admin API has it. */
interface AttemptJson {
  attempt: number;
  run: number;
  startedAt: string;
  durationMs: number;
  outcome: string;
  error: string | null;
  stack: string | null;
  actor: string | null;
}

/** One delivery of an event as `GET /api/events/:id` has it. */
export interface DeliveryJson {
  handler: string;
  status: string;
  flowKey: string | null;
  attempts: number;
  run: number;
  runAfter: string;
  lastError: string | null;
  history: AttemptJson[];
  steps?: StepJson[];
}

/** One durable step of a delivery as the admin API has it. */
interface StepJson {
  id: string;
  status: string;
  attempts: number;
  durationMs: number | null;
  error: string | null;
  until: string | null;
  waitingFor: string | null;
}

/** A step's line: its id, status, attempts and time, what it sleeps until or waits for, its error. */
function stepLine(s: StepJson): string {
  const until = s.until && s.status === 'sleeping' ? ` until ${shortTime(s.until)}` : '';
  const waiting = s.waitingFor ? ` for ${s.waitingFor}${s.until ? ` until ${shortTime(s.until)}` : ''}` : '';
  const took = s.durationMs !== null && s.status !== 'sleeping' && s.status !== 'waiting' ? ` in ${s.durationMs} ms` : '';
  return `    step ${s.id}: ${s.status}${until}${waiting}, attempts ${s.attempts}${took}${s.error ? `: ${firstLine(s.error)}` : ''}`;
}

/** An error's first line, saying how many it left out: a multi-line message would break the attempt's line. */
function firstLine(error: string): string {
  const lines = error.split('\n');
  return lines.length > 1 ? `${lines[0]} (+${lines.length - 1} more line${lines.length > 2 ? 's' : ''})` : error;
}

/** The first frames of a stored stack, then how many more there are and where to see them. */
function stackLines(stack: string): string[] {
  const frames = stack.split('\n');
  const shown = frames.slice(0, STACK_FRAMES_SHOWN).map((frame) => `         ${frame}`);
  const more = frames.length - STACK_FRAMES_SHOWN;
  return more > 0 ? [...shown, `         … ${more} more frame${more > 1 ? 's' : ''} (--json has the whole stack)`] : shown;
}

/**
 * The lines `events show` prints for one handler's delivery: its state (with
 * the next attempt only while one is due), its steps, then each attempt as the admin API
 * has it: number, start, duration, outcome, the error's first line and the
 * stack's first frames. `--json` keeps every line and frame.
 */
export function deliveryLines(d: DeliveryJson): string[] {
  const due = d.status === 'failed' || d.status === 'pending' ? `, next attempt ${shortTime(d.runAfter)}` : '';
  const lines = [`  ${d.handler}: ${d.status}, attempt ${d.attempts}${d.run > 1 ? ` of run ${d.run}` : ''}${d.flowKey ? `, key ${d.flowKey}` : ''}${due}`];
  lines.push(...(d.steps ?? []).map(stepLine));
  for (const a of d.history) {
    if (a.outcome === 'replayed') {
      lines.push(`    ${shortTime(a.startedAt)}  replayed by ${a.actor ?? 'someone'}: run ${a.run}`);
      continue;
    }
    lines.push(`    #${a.attempt}  ${shortTime(a.startedAt)}  ${a.outcome} in ${a.durationMs} ms${a.error ? `: ${firstLine(a.error)}` : ''}`);
    if (a.stack) lines.push(...stackLines(a.stack));
  }
  return lines;
}
