/**
 * Shared zod building blocks for tool schemas: text with the control-character rule,
 * handles, ids, idempotency keys, pagination. Limits come from interface-spec "Limits".
 */
import { z } from 'zod';

/** U+0000-U+001F and U+007F-U+009F are rejected in every text field (interface-spec "Limits"). Global flag: for `replace`, not `test`. */
// eslint-disable-next-line no-control-regex -- matching control characters is the rule here
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/gu;

/** Text of `min`-`max` characters without control characters; the rule is also in the JSON Schema (`pattern`). */
export function text(min: number, max: number, what = 'text') {
  return z
    .string()
    .min(min, `${what} must be at least ${min} characters`)
    .max(max, `${what} must be at most ${max} characters`)
    // eslint-disable-next-line no-control-regex -- matching control characters is the rule here
    .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/u, `${what} must not contain control characters (U+0000-U+001F, U+007F-U+009F)`);
}

/** Multi-line text (messages): newline and tab allowed, every other control character rejected. */
export function longText(min: number, max: number, what = 'text') {
  return z
    .string()
    .min(min, `${what} must be at least ${min} characters`)
    .max(max, `${what} must be at most ${max} characters`)
    // eslint-disable-next-line no-control-regex -- matching control characters is the rule here
    .regex(/^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$/u, `${what} must not contain control characters other than newline and tab`);
}

export const HANDLE_PATTERN = /^[a-z0-9][a-z0-9_-]{2,31}$/;
export const handle = z.string().regex(HANDLE_PATTERN, 'handle must match ^[a-z0-9][a-z0-9_-]{2,31}$ (3-32 chars, lowercase)');
export const displayName = text(1, 80, 'display_name');
export const description = text(0, 500, 'description');
export const uuid = z.uuid();
export const idempotencyKey = z.string().min(8).max(128).describe('Idempotency key (8-128 chars). Retrying with the same key never duplicates the effect; reuse it only for the identical call. May be sent as the Idempotency-Key header instead.');
export const cursor = z.string().min(1).max(200).describe('Opaque cursor from a previous next_cursor.');
export const limit = z.number().int().min(1).max(100).describe('Page size, 1-100 (default 20).');
export const timestamp = z.string().describe('ISO 8601 timestamp (UTC).');
/** A date without time, YYYY-MM-DD. */
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be YYYY-MM-DD').refine((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s), 'not a real calendar date');
export const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'currency must be an ISO 4217 code like EUR');
/** Integer minor units bounded by |x| ≤ 10^12 so sums stay exact (DESIGN.md §2). */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;
export const amountMinor = z.number().int().min(-MAX_AMOUNT_MINOR).max(MAX_AMOUNT_MINOR);
export const positiveAmountMinor = z.number().int().min(1).max(MAX_AMOUNT_MINOR);

/** Every data object carries suggested_next (strings "tool_name: why") and may carry inbox. */
export const suggestedNext = z.array(z.string()).describe('What to do next: each entry starts with a tool name, then why.');
export const inboxSummary = z
  .object({ unread: z.number().int(), requires_action: z.number().int(), top: z.array(z.string()) })
  .describe('Inbox summary: present when the caller has unread items.');

/** Wraps a tool's output shape with the envelope fields every tool has. */
export function output<T extends z.ZodRawShape>(shape: T) {
  return z.object({ ...shape, suggested_next: suggestedNext, inbox: inboxSummary.optional() });
}

export const agentRef = z.object({ agent_id: uuid, handle: z.string(), display_name: z.string() });
