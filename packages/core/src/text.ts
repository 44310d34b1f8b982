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
  return (
    z
      .string()
      .min(min, `${what} must be at least ${min} characters`)
      .max(max, `${what} must be at most ${max} characters`)
      // eslint-disable-next-line no-control-regex -- matching control characters is the rule here
      .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/u, `${what} must not contain control characters (U+0000-U+001F, U+007F-U+009F)`)
  );
}

/** Multi-line text (messages): newline and tab allowed, every other control character rejected. */
export function longText(min: number, max: number, what = 'text') {
  return (
    z
      .string()
      .min(min, `${what} must be at least ${min} characters`)
      .max(max, `${what} must be at most ${max} characters`)
      // eslint-disable-next-line no-control-regex -- matching control characters is the rule here
      .regex(/^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$/u, `${what} must not contain control characters other than newline and tab`)
  );
}

/** A handle as agents write it: a leading "@" (as in "@ana") is accepted and dropped; the handle itself matches ^[a-z0-9][a-z0-9_-]{2,31}$. */
export const handle = z
  .string()
  .regex(/^@?[a-z0-9][a-z0-9_-]{2,31}$/, 'handle must match ^[a-z0-9][a-z0-9_-]{2,31}$ (3-32 chars, lowercase; a leading @ is ignored)')
  .transform((s) => (s.startsWith('@') ? s.slice(1) : s));
export const displayName = text(1, 80, 'display_name');
export const description = text(0, 500, 'description');
export const uuid = z.uuid();
export const cursor = z.string().min(1).max(200).describe('Opaque cursor from a previous next_cursor.');
export const limit = z.number().int().min(1).max(100).describe('Page size, 1-100 (default 20).');
export const timestamp = z.string().describe('ISO 8601 timestamp (UTC).');
/** A date without time, YYYY-MM-DD. */
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be YYYY-MM-DD')
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    'not a real calendar date',
  );
export const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'currency must be an ISO 4217 code like EUR');
/** Integer minor units bounded by |x| ≤ 10^12 so sums stay exact (DESIGN.md §2). */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;
/** The message for an amount that is not an integer; the registry replaces it with an example in the group's currency. */
export const AMOUNT_RULE =
  'must be an integer in minor units (cents for EUR or USD, yen for JPY): send 1450 for 14.50 in a currency with 2 decimals';
export const amountMinor = z.number({ error: AMOUNT_RULE }).int({ error: AMOUNT_RULE }).min(-MAX_AMOUNT_MINOR).max(MAX_AMOUNT_MINOR);
export const positiveAmountMinor = z.number({ error: AMOUNT_RULE }).int({ error: AMOUNT_RULE }).min(1).max(MAX_AMOUNT_MINOR);

/** Every data object carries suggested_next (strings "tool_name: why") and may carry inbox. */
const suggestedNext = z.array(z.string()).describe('What to do next: each entry starts with a tool name, then why.');
const inboxSummary = z
  .object({
    unread: z.number().int(),
    requires_action: z.number().int(),
    top: z.array(z.string()),
    // Loosely typed on purpose: this block is in every tool's output schema, a full object schema costs ~800 bytes per tool.
    top_items: z
      .array(z.record(z.string(), z.unknown()))
      .describe('Items of top, same order: item_id, kind, requires_action, entity, call {tool, arguments} acting on it.'),
  })
  .describe('Inbox summary: present when the caller has unread items.');

/** On both transports: a write answered from its idempotency record instead of running again. */
const replayedFlag = z
  .literal(true)
  .optional()
  .describe(
    'Present (true) only when this result is the stored result of an earlier call with the same idempotency_key: nothing was done again.',
  );

/** Wraps a tool's output shape with the envelope fields every tool has. */
export function output<T extends z.ZodRawShape>(shape: T) {
  return z.object({ ...shape, suggested_next: suggestedNext, inbox: inboxSummary.optional(), replayed: replayedFlag });
}

export const agentRef = z.object({ agent_id: uuid, handle: z.string(), display_name: z.string() });

/** Length rule of idempotency keys, in characters (argument or Idempotency-Key header). */
export const IDEMPOTENCY_KEY_LENGTH = { min: 8, max: 128 } as const;
const KEY_RULE = `a string of ${IDEMPOTENCY_KEY_LENGTH.min}-${IDEMPOTENCY_KEY_LENGTH.max} characters (argument or Idempotency-Key header)`;
/**
 * The one declaration of `idempotency_key`: `writeTool` adds it to every write tool's input (trpc.ts);
 * the registry's JSON Schema and OpenAPI's Idempotency-Key header read their limits from here.
 */
export const idempotencyKey = z
  .string({ error: (iss) => (iss.input === undefined ? `required: ${KEY_RULE}` : `must be ${KEY_RULE}`) })
  .min(IDEMPOTENCY_KEY_LENGTH.min, { error: (iss) => `too short (${String(iss.input).length} characters): must be ${KEY_RULE}` })
  .max(IDEMPOTENCY_KEY_LENGTH.max, { error: (iss) => `too long (${String(iss.input).length} characters): must be ${KEY_RULE}` })
  .describe(
    `Idempotency key, ${IDEMPOTENCY_KEY_LENGTH.min}-${IDEMPOTENCY_KEY_LENGTH.max} characters. Retrying with the same key never duplicates the effect; reuse it only for the identical call. May be sent as the Idempotency-Key header instead.`,
  );

/** Identifiers that many tools take, described once. */
export const groupId = uuid.describe('Id of the group (UUID), as returned by create_group, list_groups or get_me.');
export const expenseId = uuid.describe('Id of the expense (UUID), as returned by add_expense or list_expenses.');
export const paymentId = uuid.describe('Id of the payment (UUID), as returned by record_payment or list_payments.');
