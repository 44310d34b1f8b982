/**
 * tRPC setup: the base procedures every tool is built from, and the middlewares that
 * enforce authentication, scopes (interface-spec "Authentication" 5) and idempotency with
 * one transaction per write (DESIGN.md §4). Tools never repeat these rules.
 */
import { createHash } from 'node:crypto';
import { initTRPC } from '@trpc/server';
import canonicalize from 'canonicalize';
import { TX_OPTIONS, type ToolContext, type AuthedContext } from './context.ts';
import type { ToolMeta } from './meta.ts';
import { ToolError, validationError, isKnownRollback, outcomeUnknownError } from './errors.ts';
import type { Services, Db } from './context.ts';
import { beginInboxCounters, flushInboxCounters } from './domain/inbox.ts';

const t = initTRPC.context<ToolContext>().meta<ToolMeta>().create({ isServer: true, allowOutsideOfServer: true });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** SHA-256 of the canonical JSON (RFC 8785) of the arguments without the idempotency key. */
export function requestHash(args: unknown): string {
  const copy = args && typeof args === 'object' && !Array.isArray(args) ? { ...(args as Record<string, unknown>) } : args;
  if (copy && typeof copy === 'object') delete (copy as Record<string, unknown>).idempotency_key;
  return createHash('sha256').update(canonicalize(copy ?? {}) ?? '').digest('hex');
}

/**
 * Authentication and the scope rule (interface-spec "Authentication" 5): read tools (queries)
 * need svc:read, write tools (mutations) svc:write; a missing scope is FORBIDDEN with
 * details.required_scope. The procedure type is the one declaration of read vs write.
 */
const authAndScope = t.middleware(async ({ ctx, meta, type, next }) => {
  if (!meta) throw new ToolError('INTERNAL', 'tool without metadata');
  if (meta.auth === 'none') return next();
  if (!ctx.auth) throw new ToolError('UNAUTHENTICATED', 'This tool needs a credential: send "Authorization: Bearer <api key>".');
  const required = type === 'query' ? 'svc:read' : 'svc:write';
  if (!ctx.auth.scopes.includes(required)) {
    throw new ToolError('FORBIDDEN', `This credential lacks the scope ${required}.`, {
      details: { required_scope: required },
      suggestedAction: `Use a credential with scope ${required}.`,
    });
  }
  return next();
});

/**
 * One interactive transaction around `body`. A failure before or inside `body` rolls back, so
 * "nothing was changed" holds. A failure after `body` returned happened while committing: unless
 * PostgreSQL reported a rollback (serialization failure, deadlock, timeout), the outcome is
 * unknown and the caller is told so (outcomeUnknownError), never that nothing changed.
 */
async function inTransaction<T>(services: Services, body: (tx: Db) => Promise<T>): Promise<T> {
  let committing = false;
  try {
    return await services.prisma.$transaction(async (tx) => {
      const r = await body(tx);
      committing = true;
      return r;
    }, TX_OPTIONS);
  } catch (e) {
    if (committing && !isKnownRollback(e)) throw outcomeUnknownError(e);
    throw e;
  }
}

const readDb = t.middleware(({ ctx, next }) => next({ ctx: { db: ctx.services.prisma } }));

/**
 * Write calls, step 1: the idempotency key may come as the argument or the `Idempotency-Key`
 * header (interface-spec "Endpoints" 2); both and different → VALIDATION_ERROR. The header's
 * key is merged into the arguments so the schema sees one `idempotency_key`.
 */
const mergeIdempotencyHeader = t.middleware(async ({ ctx, meta, getRawInput, next }) => {
  if ((meta?.idempotency ?? 'replay') === 'none' || ctx.idempotencyKeyHeader === undefined) return next();
  const raw = await getRawInput();
  const args: Record<string, unknown> = raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : {};
  const header = ctx.idempotencyKeyHeader;
  if (args.idempotency_key !== undefined && args.idempotency_key !== header) {
    throw validationError('idempotency_key', 'differs from the Idempotency-Key header; send one key, or the same in both', 'idempotency_key_mismatch');
  }
  args.idempotency_key = header;
  return next({ getRawInput: async () => args });
});

/**
 * Write calls, step 2: one transaction holding the idempotency record, the effect and its
 * activity (DESIGN.md §4). The record is inserted first; a concurrent duplicate blocks on its
 * primary key until the first commits (then replays) or rolls back (then runs). A failed
 * attempt stores nothing; different arguments under the same key → IDEMPOTENCY_KEY_REUSED.
 */
const writeTx = t.middleware(async ({ ctx, meta, path, getRawInput, next }) => {
  const mode = meta?.idempotency ?? 'replay';
  if (mode === 'none') {
    return inTransaction(ctx.services, async (tx) => {
      beginInboxCounters(tx);
      const result = await next({ ctx: { db: tx } });
      if (!result.ok) throw result.error;
      await flushInboxCounters(tx);
      return result;
    });
  }
  const raw = await getRawInput();
  const args = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const key = args.idempotency_key;
  if (typeof key !== 'string' || key.length < 8 || key.length > 128) {
    throw validationError('idempotency_key', 'required: a string of 8-128 characters (argument or Idempotency-Key header)', 'required');
  }
  const agentId = (ctx as AuthedContext).auth.agentId;
  const hash = requestHash(args);

  return inTransaction(ctx.services, async (tx) => {
    const inserted = await tx.$executeRaw`
      INSERT INTO idempotency_records (agent_id, tool, key, request_hash, response)
      VALUES (${agentId}::uuid, ${path}, ${key}, ${hash}, 'null'::jsonb)
      ON CONFLICT DO NOTHING`;
    if (inserted === 0) {
      const rec = await tx.idempotencyRecord.findUnique({ where: { agentId_tool_key: { agentId, tool: path, key } } });
      if (!rec) throw new ToolError('REQUEST_IN_PROGRESS', 'The same idempotency key is in use by a call that has not finished.', { retryAfter: 1 });
      if (rec.requestHash !== hash) {
        throw new ToolError('IDEMPOTENCY_KEY_REUSED', `idempotency_key "${key}" was already used for ${path} with different arguments.`, {
          details: { idempotency_key: key, tool: path },
        });
      }
      if (mode === 'never_replay') {
        throw new ToolError('IDEMPOTENCY_REPLAY_UNAVAILABLE', `${path} already ran with idempotency_key "${key}"; its result is shown only once and is never replayed.`, {
          details: { idempotency_key: key, tool: path },
        });
      }
      ctx.call.replayed = true;
      return { ok: true as const, data: rec.response, marker: undefined as never };
    }
    beginInboxCounters(tx);
    const result = await next({ ctx: { db: tx } });
    if (!result.ok) throw result.error;
    // Agent-row locks last and in id order (domain/inbox.ts): the inbox counters of everyone notified.
    await flushInboxCounters(tx);
    const stored = mode === 'never_replay' ? { never_replayed: true } : result.data;
    await tx.$executeRaw`
      UPDATE idempotency_records SET response = ${JSON.stringify(stored)}::jsonb
      WHERE agent_id = ${agentId}::uuid AND tool = ${path} AND key = ${key}`;
    return result;
  });
});

const base = t.procedure.use(authAndScope);

/** Base for read tools (scope svc:read; no side effects). */
export const readTool = base.use(readDb);
/** Base for write tools (scope svc:write; one transaction with the idempotency record). */
export const writeTool = base.use(mergeIdempotencyHeader).use(writeTx);
