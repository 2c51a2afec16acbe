import { afterEach, describe, expect, it } from 'vitest';
import { INSTANT_HINT, parseInstant, readInstant } from '../../src/time/instant.js';

const iso = (text: string) => readInstant(text)?.toISOString();

describe('one date reader', () => {
  const zone = process.env.TZ;
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('reads a date or a time without an offset as UTC, whatever the zone of the machine', () => {
    for (const tz of ['America/New_York', 'Asia/Tokyo', 'UTC']) {
      process.env.TZ = tz;
      expect(new Date(2020, 0, 1).getTimezoneOffset(), tz).toBe({ 'America/New_York': 300, 'Asia/Tokyo': -540, UTC: 0 }[tz]);
      expect(iso('2026-11-20'), tz).toBe('2026-11-20T00:00:00.000Z');
      expect(iso('2026-11-20T08:00'), tz).toBe('2026-11-20T08:00:00.000Z');
      expect(iso('2026-11-20 08:00:30'), tz).toBe('2026-11-20T08:00:30.000Z');
      expect(iso('2026-11-20T08:00:30.25'), tz).toBe('2026-11-20T08:00:30.250Z');
    }
  });

  it('reads a time with an offset as that instant', () => {
    expect(iso('2026-11-20T08:00:00Z')).toBe('2026-11-20T08:00:00.000Z');
    expect(iso('2026-11-20T08:00z')).toBe('2026-11-20T08:00:00.000Z');
    expect(iso('2026-11-20T08:00:00+01:00')).toBe('2026-11-20T07:00:00.000Z');
    expect(iso('2026-11-20T08:00-0530')).toBe('2026-11-20T13:30:00.000Z');
    expect(iso('2026-11-20T00:30+02')).toBe('2026-11-19T22:30:00.000Z');
  });

  it('refuses anything else, a day that does not exist included, with one message', () => {
    for (const bad of [
      'yesterday',
      'Jan 31 2025',
      '2026-02-30',
      '2026-13-01',
      '2026-11-20T24:00',
      '2026-11-20T08:60',
      '2026-11-20Z',
      '1700000000',
      '20261120',
      '',
    ])
      expect(readInstant(bad), bad).toBeUndefined();
    expect(() => parseInstant('Jan 31 2025', 'from')).toThrow(`from "Jan 31 2025" is not a date or time: ${INSTANT_HINT}.`);
  });
});
