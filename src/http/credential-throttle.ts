import { addressKey } from '../webhooks/body-budget.js';

/** Wrong credentials one address may send per window; the last of them starts its block. */
export const MAX_FAILURES_PER_ADDRESS = 10;
/** Wrong credentials from all addresses together per window; the last of them starts the global block. */
export const MAX_GLOBAL_FAILURES = 100;
/** The window failures are counted in. */
export const FAILURE_WINDOW_MS = 60_000;
/** A first block; each repeat offence doubles it, up to MAX_BLOCK_MS. */
export const FIRST_BLOCK_MS = 60_000;
/** The longest block. */
export const MAX_BLOCK_MS = 15 * 60_000;
/** A block that starts this long after the previous one ended is a first offence again. */
export const OFFENCE_MEMORY_MS = 60 * 60_000;
/** How long a correct credential keeps its address out of the global block. */
export const TRUSTED_FOR_MS = 24 * 60 * 60_000;
/** Addresses remembered at once; the least recently failed is forgotten first (a flood of addresses cannot grow memory). */
const MAX_ADDRESSES = 10_000;
/** Requests of one untrusted address that may wait for a credential in flight to be answered; more are refused. */
const MAX_WAITING_PER_ADDRESS = 100;
/** How long such a request waits at most (real time: it bounds a held connection, not a rule). */
const MAX_WAIT_MS = 5_000;
/** Trusted addresses remembered at once (only a correct credential adds one, so no guesser can fill it). */
const MAX_TRUSTED = 1_000;

/** Why a request is refused before its credential is compared, and for how long. */
export interface CredentialBlock {
  /**
   * `address`: its own wrong credentials; `everyone`: everyone's, and it sent
   * one too; `in_flight`: an untrusted address has as many credentials being
   * checked as it has guesses left.
   */
  scope: 'address' | 'everyone' | 'in_flight';
  retryAfterMs: number;
}

/** What the compared credential turned out to be; `undefined` when the answer does not say (a 404 after the check, a 413 before it). */
export type CredentialOutcome = 'wrong' | 'right' | undefined;

/** Failures in a window; filling it starts a block that doubles on each repeat offence. */
class Offender {
  failures: number[] = [];
  blockedUntil = -Infinity;
  lastFailedAt = -Infinity;
  /** Credentials admitted and not yet answered. */
  inFlight = 0;
  /** Requests waiting for one of those to be answered. */
  readonly waiting = new Set<() => void>();
  private offences = 0;

  fail(nowMs: number, limit: number): void {
    this.lastFailedAt = nowMs;
    this.failures = [...this.failures.filter((at) => nowMs - at < FAILURE_WINDOW_MS), nowMs].slice(-limit);
    if (nowMs < this.blockedUntil || this.failures.length < limit) return;
    if (nowMs - this.blockedUntil >= OFFENCE_MEMORY_MS) this.offences = 0;
    this.blockedUntil = nowMs + Math.min(FIRST_BLOCK_MS * 2 ** this.offences, MAX_BLOCK_MS);
    this.offences++;
    this.failures = [];
  }

  retryAfterMs(nowMs: number): number {
    return Math.max(0, this.blockedUntil - nowMs);
  }

  recentFailures(nowMs: number): number {
    return this.failures.filter((at) => nowMs - at < FAILURE_WINDOW_MS).length;
  }

  /** A right credential: its wrong ones are forgiven (not its blocks: a repeat offence still doubles). */
  forgive(): void {
    this.failures = [];
    this.lastFailedAt = -Infinity;
  }

  /** Nothing worth remembering: nothing in flight or waiting, no failure, no block or offence within memory. */
  isIdle(nowMs: number): boolean {
    return this.inFlight === 0 && this.waiting.size === 0 && this.failures.length === 0 && nowMs - this.blockedUntil >= OFFENCE_MEMORY_MS;
  }

  /** Wait until a credential in flight is answered (true) or MAX_WAIT_MS passes (false). */
  waitForAnswer(): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiting.delete(wake);
        resolve(false);
      }, MAX_WAIT_MS);
      this.waiting.add(wake);
    });
  }

  /** Every waiting request looks again (the answer may have blocked the address, or trusted it). */
  wakeAll(): void {
    for (const wake of [...this.waiting]) wake();
  }
}

/**
 * Makes guessing a bearer expensive: past 10 wrong credentials in a minute
 * from one address (IPv6 by its /64), that address is refused for 1 minute
 * without its credential being compared, so the right one is refused too and
 * a 429 tells a guesser nothing; each repeat within the hour doubles the
 * block, up to 15 minutes. Past 100 wrong ones from everyone, the same goes
 * for every address that sent a wrong one (since its last right one) and has
 * not used a right one in the last 24 hours; an address never seen is still
 * compared until it fails, so the real admin gets in from another address.
 * A request without an address (inside a Next.js route) is checked first:
 * there every caller is one "unknown", and refusing it unread would let one
 * guesser lock out the admin and Vercel Cron. In memory, per instance.
 */
export class CredentialThrottle {
  private readonly addresses = new Map<string, Offender>();
  private readonly everyone = new Offender();
  private readonly trusted = new Map<string, number>();

  constructor(
    private readonly perAddress = MAX_FAILURES_PER_ADDRESS,
    private readonly global = MAX_GLOBAL_FAILURES,
  ) {}

  /** The block that refuses a credential from `address` now without comparing it, or undefined. */
  blockFor(address: string | undefined, nowMs: number): CredentialBlock | undefined {
    const key = keyOf(address);
    const own = this.addresses.get(key);
    if (own && own.retryAfterMs(nowMs) > 0) return { scope: 'address', retryAfterMs: own.retryAfterMs(nowMs) };
    const everyone = this.everyone.retryAfterMs(nowMs);
    if (everyone > 0 && own && nowMs - own.lastFailedAt < OFFENCE_MEMORY_MS && !this.isTrusted(key, nowMs)) {
      return { scope: 'everyone', retryAfterMs: everyone };
    }
    return undefined;
  }

  /**
   * Before a credential is compared: the block that refuses it, or undefined
   * and the attempt is counted as in flight until `settle`. An untrusted
   * address may have no more in flight than it has guesses left, so
   * concurrent requests cannot get more compared than the limit: the others
   * wait for an answer and look again (a right one lets them all through).
   */
  async admit(address: string | undefined, now: () => number): Promise<CredentialBlock | undefined> {
    if (address === undefined) return undefined; // every caller is one here: refusing unread would lock the real one out too
    for (;;) {
      const nowMs = now();
      const block = this.blockFor(address, nowMs);
      if (block) return block;
      const key = keyOf(address);
      const own = this.touch(key);
      if (this.isTrusted(key, nowMs) || own.recentFailures(nowMs) + own.inFlight < this.perAddress) {
        own.inFlight++;
        return undefined;
      }
      if (own.waiting.size >= MAX_WAITING_PER_ADDRESS || !(await own.waitForAnswer())) return { scope: 'in_flight', retryAfterMs: 1000 };
    }
  }

  /**
   * An admitted attempt is answered: count a wrong credential, remember a
   * right one, let the waiting look again. Without an address the credential
   * was checked first: a wrong one gets the block that already held (its
   * answer becomes that 429), as a receiver's does.
   */
  settle(address: string | undefined, nowMs: number, outcome: CredentialOutcome): CredentialBlock | undefined {
    if (address === undefined) {
      const before = outcome === 'wrong' ? this.blockFor(undefined, nowMs) : undefined;
      if (outcome === 'wrong') this.fail(undefined, nowMs);
      return before;
    }
    const key = keyOf(address);
    const own = this.addresses.get(key);
    if (own) own.inFlight = Math.max(0, own.inFlight - 1);
    if (outcome === 'wrong') this.fail(address, nowMs);
    else if (outcome === 'right') this.succeed(key, nowMs);
    own?.wakeAll();
    if (own?.isIdle(nowMs) && this.addresses.get(key) === own) this.addresses.delete(key);
    return undefined;
  }

  /** Count a wrong or missing credential (a receiver counts its refusals here without `admit`). */
  fail(address: string | undefined, nowMs: number): void {
    this.touch(keyOf(address)).fail(nowMs, this.perAddress);
    this.everyone.fail(nowMs, this.global);
  }

  private succeed(key: string, nowMs: number): void {
    this.addresses.get(key)?.forgive();
    this.trusted.delete(key); // re-insert: the map's order is the eviction order
    this.trusted.set(key, nowMs);
    if (this.trusted.size > MAX_TRUSTED) this.trusted.delete(this.trusted.keys().next().value!);
  }

  private isTrusted(key: string, nowMs: number): boolean {
    const at = this.trusted.get(key);
    return at !== undefined && nowMs - at < TRUSTED_FOR_MS;
  }

  /** The address's record, made the most recent (the map's order is the eviction order). */
  private touch(key: string): Offender {
    const own = this.addresses.get(key) ?? new Offender();
    this.addresses.delete(key);
    this.addresses.set(key, own);
    if (this.addresses.size > MAX_ADDRESSES) {
      const [oldestKey, oldest] = this.addresses.entries().next().value!;
      this.addresses.delete(oldestKey);
      oldest.wakeAll(); // they look again under a fresh record
    }
    return own;
  }
}

/** The block's `Retry-After`, in whole seconds (at least 1). */
export function retryAfterSeconds(block: CredentialBlock): number {
  return Math.max(1, Math.ceil(block.retryAfterMs / 1000));
}

/**
 * What a refused caller reads (the API's JSON and the console's login page):
 * why, for how long, and what to do. `checked`: its credential was compared
 * first (a receiver, no address) and was wrong.
 */
export function blockMessage(block: CredentialBlock, checked = false): string {
  const seconds = retryAfterSeconds(block);
  if (checked) {
    return `Too many wrong or missing credentials from your address or from everyone; retry in ${seconds} s with the right one (a correct one is always accepted here).`;
  }
  switch (block.scope) {
    case 'address':
      return `Too many wrong or missing credentials from your address: for ${seconds} s every credential from it is refused unchecked, longer each time it happens again. Retry in ${seconds} s with the right one.`;
    case 'everyone':
      return `Too many wrong or missing credentials from many addresses, and one from yours: for ${seconds} s every credential from your address is refused unchecked. Retry in ${seconds} s with the right one, or from an address that has not sent a wrong one.`;
    case 'in_flight':
      return `Too many credentials from your address are being checked at once; retry in ${seconds} s, one request at a time.`;
  }
}

/** One key per client: IPv4 as is, IPv6 by its /64 (as the body budget counts); no address is one client, "unknown". */
function keyOf(address: string | undefined): string {
  return addressKey(address) ?? 'unknown';
}
