import { z } from 'zod';

/** An ISO 8601 date string in a payload, as a Date: Paddle and Lemon Squeezy send their times so; a malformed one fails the payload's parse. */
export const isoDate = z
  .string()
  .min(1)
  .transform((value, ctx) => {
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) ctx.addIssue({ code: 'custom', message: `not a date: ${value}` });
    return date;
  });
