/**
 * The one error type of Kitty and its code table (DESIGN.md §4, interface-spec "Errors").
 *
 * Every failure, on REST and MCP alike, becomes the envelope
 * `{ ok:false, error:{ code, message, suggested_action, details?, retry_after? }, request_id }`.
 * The HTTP status and the MCP projection follow `code` through ERROR_TABLE; a test pins it.
 */
import { TRPCError } from '@trpc/server';
import { z } from 'zod';

type TrpcCode = ConstructorParameters<typeof TRPCError>[0]['code'];

/** code → HTTP status → tRPC code → how MCP carries it. */
export const ERROR_TABLE = {
  VALIDATION_ERROR: { status: 400, trpc: 'BAD_REQUEST', mcp: 'tool_error' },
  /** The HTTP message itself is malformed (e.g. Content-Length with Transfer-Encoding, a bad URL encoding): refused before any route. */
  BAD_REQUEST: { status: 400, trpc: 'BAD_REQUEST', mcp: 'tool_error' },
  UNAUTHENTICATED: { status: 401, trpc: 'UNAUTHORIZED', mcp: 'tool_error' },
  FORBIDDEN: { status: 403, trpc: 'FORBIDDEN', mcp: 'tool_error' },
  NOT_FOUND: { status: 404, trpc: 'NOT_FOUND', mcp: 'tool_error' },
  METHOD_NOT_ALLOWED: { status: 405, trpc: 'METHOD_NOT_SUPPORTED', mcp: 'tool_error' },
  // 409 family: the request was understood but conflicts with the current state.
  HANDLE_TAKEN: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  IDEMPOTENCY_REPLAY_UNAVAILABLE: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  REQUEST_IN_PROGRESS: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  NOT_SETTLED: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  GROUP_ARCHIVED: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  INVITE_UNAVAILABLE: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  NOT_A_CONTACT: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  ALREADY_EXISTS: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  LAST_ADMIN: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  INVALID_STATE: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  /** Concurrent work on the same rows (deadlock, serialization failure, pool wait): nothing changed; retry after retry_after. */
  TRANSIENT_CONFLICT: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  PAYMENT_NOT_PENDING: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  /** A payment larger than what the payer owes or the payee is owed, without allow_overpayment. */
  OVERPAYMENT: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  EXPENSE_DELETED: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  MEMBER_LEFT: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  /** A direct ledger whose other agent has not accepted it yet: nothing can be booked in it. */
  DIRECT_LEDGER_NOT_ACCEPTED: { status: 409, trpc: 'CONFLICT', mcp: 'tool_error' },
  /** The client took too long to send the request (headers or body). */
  REQUEST_TIMEOUT: { status: 408, trpc: 'TIMEOUT', mcp: 'tool_error' },
  PAYLOAD_TOO_LARGE: { status: 413, trpc: 'PAYLOAD_TOO_LARGE', mcp: 'tool_error' },
  URI_TOO_LONG: { status: 414, trpc: 'BAD_REQUEST', mcp: 'tool_error' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, trpc: 'UNSUPPORTED_MEDIA_TYPE', mcp: 'tool_error' },
  HEADERS_TOO_LARGE: { status: 431, trpc: 'BAD_REQUEST', mcp: 'tool_error' },
  RATE_LIMITED: { status: 429, trpc: 'TOO_MANY_REQUESTS', mcp: 'tool_error' },
  INTERNAL: { status: 500, trpc: 'INTERNAL_SERVER_ERROR', mcp: 'tool_error' },
  /** The database cannot be reached (down, restarting, connection refused): nothing was changed; retry after retry_after. */
  SERVICE_UNAVAILABLE: { status: 503, trpc: 'SERVICE_UNAVAILABLE', mcp: 'tool_error' },
} as const satisfies Record<string, { status: number; trpc: TrpcCode; mcp: 'tool_error' }>;

export type ErrorCode = keyof typeof ERROR_TABLE;
export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

/** A field problem inside VALIDATION_ERROR `details.issues`. `path` is dotted ("payers.0.amount_minor"). */
export interface ValidationIssue {
  path: string;
  message: string;
  code?: string;
}

/** The `error` object of every failure, written once: its type here, its JSON Schema for OpenAPI and the typed client. */
const errorBodySchema = z
  .object({
    code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]).describe('What went wrong; the HTTP status follows it.'),
    message: z.string().describe('What went wrong, in a sentence.'),
    suggested_action: z.string().describe('What to do next.'),
    details: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Specifics, e.g. issues (VALIDATION_ERROR: one per field, with its path) or required_scope (FORBIDDEN).'),
    retry_after: z.number().optional().describe('Seconds to wait before retrying with the same idempotency key.'),
  })
  .strict();
export type ErrorBody = z.infer<typeof errorBodySchema>;
/** JSON Schema 2020-12 of ErrorBody. */
export const ERROR_BODY_JSON_SCHEMA = z.toJSONSchema(errorBodySchema) as Record<string, unknown>;

const DEFAULT_ACTION: Record<ErrorCode, string> = {
  VALIDATION_ERROR: 'Fix the fields listed in details.issues and call again.',
  BAD_REQUEST: 'Send a well-formed HTTP/1.1 request: one Content-Length or Transfer-Encoding (not both), a percent-encoded URL.',
  UNAUTHENTICATED: 'Send "Authorization: Bearer <api key>"; register with register_agent to get one.',
  FORBIDDEN: 'This credential or agent may not do this; see details.',
  NOT_FOUND: 'Check the identifier; list the resources you can see with the matching list_* tool.',
  METHOD_NOT_ALLOWED: 'Use the method shown in GET /openapi.json.',
  HANDLE_TAKEN: 'Pick another handle.',
  IDEMPOTENCY_KEY_REUSED: 'Use a new idempotency_key for a different call; reuse a key only to retry the identical call.',
  IDEMPOTENCY_REPLAY_UNAVAILABLE: 'This call is never replayed; use a new idempotency_key to do it again.',
  REQUEST_IN_PROGRESS: 'The same call is still running; retry after retry_after seconds with the same idempotency_key.',
  NOT_SETTLED: 'Settle up first: see get_balances and suggest_settlements.',
  GROUP_ARCHIVED: 'The group is archived for good; create a new group.',
  INVITE_UNAVAILABLE: 'Ask the inviter for a new invite.',
  NOT_A_CONTACT: 'Add the agent as a contact with add_contact first.',
  ALREADY_EXISTS: 'It already exists; read it instead of creating it.',
  LAST_ADMIN: 'Make another member admin first with set_member_role.',
  INVALID_STATE: 'The resource is not in a state that allows this; read it again.',
  TRANSIENT_CONFLICT: 'Retry after retry_after seconds with the same idempotency_key.',
  PAYMENT_NOT_PENDING: 'Only a pending payment can be confirmed, rejected or cancelled; read it with get_payment (details.status).',
  OVERPAYMENT: 'Record at most details.max_minor, or pass allow_overpayment: true if more really changed hands.',
  EXPENSE_DELETED: 'The expense is deleted; restore_expense brings it back first.',
  MEMBER_LEFT: 'The change involves a member who left the group settled; leave their part unchanged.',
  DIRECT_LEDGER_NOT_ACCEPTED:
    'Wait until the other agent accepts the direct ledger (they call open_direct_group with your handle, or join_group with the code); get_group shows member_count 2 once they have.',
  REQUEST_TIMEOUT: 'Send the whole request promptly, then retry with the same idempotency_key.',
  PAYLOAD_TOO_LARGE: 'Send a smaller body.',
  URI_TOO_LONG: 'Use a shorter URL: tool names and invite codes are short; arguments go in the JSON body.',
  HEADERS_TOO_LARGE: 'Send fewer or smaller headers (together at most 16 KB).',
  UNSUPPORTED_MEDIA_TYPE: 'Send Content-Type: application/json.',
  RATE_LIMITED: 'Wait retry_after seconds, then retry with the same idempotency_key.',
  INTERNAL: 'Retry later with the same idempotency_key; report the request_id if it persists.',
  SERVICE_UNAVAILABLE: 'Retry after retry_after seconds with the same idempotency_key.',
};

/**
 * The only error tools throw. Extends TRPCError so tRPC keeps it intact through callers.
 * @param code    a key of ERROR_TABLE
 * @param message what went wrong, for the agent
 * @param opts.suggestedAction what to do next (defaults per code)
 * @param opts.details extra machine-readable facts (`issues` for VALIDATION_ERROR)
 * @param opts.retryAfter seconds to wait before retrying
 */
export class ToolError extends TRPCError {
  readonly kittyCode: ErrorCode;
  readonly suggestedAction: string;
  readonly details?: Record<string, unknown>;
  readonly retryAfter?: number;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { suggestedAction?: string; details?: Record<string, unknown>; retryAfter?: number; cause?: unknown } = {},
  ) {
    super({ code: ERROR_TABLE[code].trpc, message, cause: opts.cause });
    this.name = 'ToolError';
    this.kittyCode = code;
    this.suggestedAction = opts.suggestedAction ?? DEFAULT_ACTION[code];
    if (opts.details !== undefined) this.details = opts.details;
    if (opts.retryAfter !== undefined) this.retryAfter = opts.retryAfter;
  }

  get status(): number {
    return ERROR_TABLE[this.kittyCode].status;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.kittyCode, message: this.message, suggested_action: this.suggestedAction };
    if (this.details !== undefined) body.details = this.details;
    if (this.retryAfter !== undefined) body.retry_after = this.retryAfter;
    return body;
  }
}

/** VALIDATION_ERROR naming one field. */
export function validationError(path: string, message: string, code = 'invalid'): ToolError {
  return new ToolError('VALIDATION_ERROR', `${path}: ${message}`, { details: { issues: [{ path, message, code }] } });
}

/**
 * Turns a zod error's issues into `details.issues`. An unknown key becomes one issue per key whose
 * path names the key itself (code unrecognized_keys), so the registry can suggest the closest key.
 * A custom refinement may name its own code in params.code.
 */
export function issuesFromZod(
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string; code?: string; keys?: string[]; params?: Record<string, unknown> }>,
): ValidationIssue[] {
  const dotted = (p: PropertyKey[]) => (p.length ? p.map(String).join('.') : '(root)');
  return issues.flatMap((i) => {
    if (i.code === 'unrecognized_keys' && Array.isArray(i.keys) && i.keys.length) {
      return i.keys.map((k) => ({ path: dotted([...i.path, k]), message: 'unknown key', code: 'unrecognized_keys' }));
    }
    const code = i.code === 'custom' && typeof i.params?.code === 'string' ? i.params.code : i.code;
    return [{ path: dotted(i.path), message: i.message, ...(code ? { code } : {}) }];
  });
}

function isZodError(e: unknown): e is { issues: Array<{ path: PropertyKey[]; message: string; code?: string }> } {
  return typeof e === 'object' && e !== null && Array.isArray((e as { issues?: unknown }).issues);
}

/** Prisma/pg errors that mean "try again" rather than "bug": serialization failures, deadlocks, pool waits. */
function isTransient(e: unknown): boolean {
  const anyE = e as { code?: string; message?: string; cause?: unknown } | null;
  if (!anyE) return false;
  const code = anyE.code ?? '';
  if (['40001', '40P01', '55P03', 'P2034', 'P2024', 'P2028'].includes(code)) return true;
  const msg = String(anyE.message ?? '');
  if (
    /could not serialize|deadlock detected|Transaction API error|Unable to start a transaction|timed out fetching a new connection/i.test(
      msg,
    )
  )
    return true;
  return anyE.cause ? isTransient(anyE.cause) : false;
}

/** SQLSTATE classes/codes and driver errors meaning the database could not be reached or went away (PostgreSQL appendix A: class 08, 57P01-57P03). */
export function isDatabaseUnavailable(e: unknown): boolean {
  const anyE = e as { code?: string; message?: string; cause?: unknown } | null;
  if (!anyE || typeof anyE !== 'object') return false;
  const code = String(anyE.code ?? '');
  if (/^08/.test(code) || ['57P01', '57P02', '57P03', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'P1001', 'P1002', 'P1017'].includes(code))
    return true;
  const msg = String(anyE.message ?? '');
  if (
    /Connection terminated|ECONNREFUSED|ECONNRESET|Client has encountered a connection error|Can't reach database server|the database system is (starting up|shutting down|in recovery mode|not yet accepting connections)|terminating connection due to (administrator command|unexpected postmaster exit)|Database error\. Code: `(08[0-9A-Z]{3}|57P0[123])`/i.test(
      msg,
    )
  )
    return true;
  return anyE.cause ? isDatabaseUnavailable(anyE.cause) : false;
}

/** True for failures that PostgreSQL reports after rolling the transaction back (serialization failure, deadlock, Prisma's transaction timeout). */
export function isKnownRollback(e: unknown): boolean {
  return isTransient(e);
}

/**
 * The error for a write whose COMMIT was sent but whose outcome is unknown (the connection was
 * lost or the database died before it answered): the change may or may not be stored. A retry
 * with the same idempotency key answers from the stored result if it was stored, or runs it now.
 */
export function outcomeUnknownError(cause: unknown): ToolError {
  return new ToolError(
    'INTERNAL',
    'The database stopped answering while this change was being committed: it may or may not have been stored.',
    {
      suggestedAction:
        'Retry the identical call with the same idempotency_key: if the change was stored you get its stored result (marked replayed), otherwise it runs now. Never retry with a new key.',
      details: { outcome: 'unknown' },
      cause,
    },
  );
}

/**
 * Normalises anything thrown during a tool call into a ToolError.
 * Zod errors → VALIDATION_ERROR with issues; transient DB contention → TRANSIENT_CONFLICT (409) with retry_after;
 * database unreachable → SERVICE_UNAVAILABLE (503) with retry_after; anything else → INTERNAL (the original is kept as `cause` for logs, never sent out).
 */
export function toToolError(e: unknown): ToolError {
  if (e instanceof ToolError) return e;
  if (e instanceof TRPCError) {
    if (e.cause instanceof ToolError) return e.cause;
    if (isZodError(e.cause)) {
      const issues = issuesFromZod(e.cause.issues);
      return new ToolError('VALIDATION_ERROR', `Invalid arguments: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
        details: { issues },
      });
    }
    if (e.code === 'NOT_FOUND') return new ToolError('NOT_FOUND', e.message);
    if (e.code === 'BAD_REQUEST') return new ToolError('VALIDATION_ERROR', e.message, { details: { issues: [] } });
    if (e.cause) return toToolError(e.cause);
  }
  if (isZodError(e)) {
    const issues = issuesFromZod(e.issues);
    return new ToolError('VALIDATION_ERROR', `Invalid arguments: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      details: { issues },
    });
  }
  if (isTransient(e)) {
    return new ToolError('TRANSIENT_CONFLICT', 'The database is busy with conflicting work; nothing was changed.', {
      retryAfter: 1,
      cause: e,
    });
  }
  if (isDatabaseUnavailable(e)) {
    return new ToolError('SERVICE_UNAVAILABLE', 'The database is unavailable; nothing was changed.', { retryAfter: 1, cause: e });
  }
  return new ToolError('INTERNAL', 'An internal error occurred; nothing was changed.', { cause: e });
}

/** The error envelope of interface-spec "Errors", shared by REST and MCP. */
export interface ErrorEnvelope {
  ok: false;
  error: ErrorBody;
  request_id: string;
}

export function toErrorEnvelope(e: unknown, requestId: string): { status: number; body: ErrorEnvelope; error: ToolError } {
  const err = toToolError(e);
  return { status: err.status, body: { ok: false, error: err.toBody(), request_id: requestId }, error: err };
}
