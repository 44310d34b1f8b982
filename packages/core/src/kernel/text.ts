/**
 * Shared zod building blocks for tool schemas: text with the control-character rule,
 * handles, ids, idempotency keys, pagination. Limits come from interface-spec "Limits".
 */
import { z } from 'zod';
import { shape } from './json-schema.ts';

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
export const cursor = z.string().min(1).max(200).describe("The previous page's next_cursor.");
export const limit = z.number().int().min(1).max(100).describe('Page size (default 20).');
/** A time in a result: an ISO 8601 UTC string (said once, in RESULT_ENVELOPE_TEXT, not on each field). */
export const timestamp = z.string();
/** A time an agent sends (filters): ISO 8601, UTC. */
export const since = z.string().describe('ISO 8601, UTC: only what changed after it (for sync).');
/** A date without time, YYYY-MM-DD. */
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'date must be YYYY-MM-DD')
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    'not a real calendar date',
  );
/** A duration as agents write it: 1-9999 minutes, hours or days ("30m", "12h", "7d"); create_invite and create_api_key. */
export const expiresIn = z.string().regex(/^[1-9]\d{0,3}[mhd]$/, 'expires_in must look like 30m, 12h or 7d');
const UNIT_SECONDS = { m: 60, h: 3600, d: 86_400 } as const;
/** Seconds of an `expiresIn` value. */
export function durationSeconds(value: string): number {
  return Number(value.slice(0, -1)) * UNIT_SECONDS[value.slice(-1) as keyof typeof UNIT_SECONDS];
}
/** An ISO 4217 code; a lower-case one ("eur") is refused with the code as it should be written. */
export const currencyCode = z.string().regex(/^[A-Z]{3}$/, {
  error: (iss) =>
    typeof iss.input === 'string' && /^[A-Za-z]{3}$/.test(iss.input)
      ? `currency codes are upper case: ${iss.input.toUpperCase()}`
      : 'currency must be an ISO 4217 code like EUR',
});
/** Integer minor units bounded by |x| ≤ 10^12 so sums stay exact (DESIGN.md §2). */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;
/** The message for an amount that is not an integer; the registry replaces it with an example in the group's currency. */
export const AMOUNT_RULE =
  'must be an integer in minor units (cents for EUR or USD, yen for JPY): send 1450 for 14.50 in a currency with 2 decimals';
export const amountMinor = z.number({ error: AMOUNT_RULE }).int({ error: AMOUNT_RULE }).min(-MAX_AMOUNT_MINOR).max(MAX_AMOUNT_MINOR);
export const positiveAmountMinor = z.number({ error: AMOUNT_RULE }).int({ error: AMOUNT_RULE }).min(1).max(MAX_AMOUNT_MINOR);

/** Every data object carries suggested_next (strings "tool_name: why") and may carry inbox. */
const suggestedNext = z.array(z.string()).describe('Next calls, each "tool_name: why".');
const inboxSummary = z
  .object({
    unread: z.number().int(),
    requires_action: z.number().int(),
    top: z.array(z.string()),
    top_items: z.array(
      z.object({
        item_id: z.string(),
        kind: z.string(),
        requires_action: z.boolean(),
        entity: z.object({ type: z.string(), id: z.string() }).nullable(),
        call: z.object({ tool: z.string(), arguments: z.record(z.string(), z.unknown()) }),
      }),
    ),
  })
  .describe('Only when you have unread inbox items (get_inbox).');

/** On both transports: a write answered from its idempotency record instead of running again. */
const replayedFlag = z
  .literal(true)
  .optional()
  .describe('Only on a replay of an earlier call with this idempotency_key: nothing was done again.');

/**
 * The fields every tool's result has besides its own. The catalogue describes them once (`Registry.envelope`,
 * the MCP instructions) instead of in each tool's output schema; the zod output of every tool still has them.
 */
export const resultEnvelope = z.object({ suggested_next: suggestedNext, inbox: inboxSummary.optional(), replayed: replayedFlag });

/** One sentence saying what `resultEnvelope` says, for the MCP instructions and the docs. */
export const RESULT_ENVELOPE_TEXT =
  'Every result object also has suggested_next (next calls, each "tool_name: why"), inbox {unread, requires_action, top, top_items} ' +
  'when you have unread inbox items (top: short lines; top_items: the same items with item_id, kind, requires_action, entity ' +
  '{type, id} and call {tool, arguments}: the one call that acts on each, ready to send; get_inbox lists them all), and replayed: true when it is the stored result of an earlier call ' +
  'with the same idempotency_key (nothing was done again); tool output schemas list only their own fields. ' +
  'Times (*_at) are ISO 8601 UTC strings; *_minor amounts are integers in minor units of the currency. In output schemas an ' +
  'object without "required" always has every listed property (null where its type allows).';

/** Wraps a tool's output shape with the envelope fields every tool has. */
export function output<T extends z.ZodRawShape>(shape: T) {
  return z.object({ ...shape, ...resultEnvelope.shape });
}

/** Another agent as results show it; a shared shape (`$defs/AgentRef` where a result has several). */
export const agentRef = shape('AgentRef', z.object({ agent_id: uuid, handle: z.string(), display_name: z.string() }));

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
  .describe('New per action; a retry with it never acts twice.');

/** Identifiers that many tools take, described once. */
/** A UUID naming a `what`; a missing or malformed one is refused naming the tool that lists them. */
function idOf(what: string, lister: string) {
  return z.uuid({
    error: (iss) =>
      iss.input === undefined
        ? `required: the ${what} id (a UUID) that ${lister} shows`
        : `not a ${what} id: ids are UUIDs; ${lister} shows yours`,
  });
}
export const groupId = idOf('group', 'list_groups').describe('Group id (UUID) from list_groups or create_group.');
export const expenseId = idOf('expense', 'list_expenses').describe('Expense id (UUID) from add_expense or list_expenses.');
export const paymentId = idOf('payment', 'list_payments').describe('Payment id (UUID) from record_payment or list_payments.');
