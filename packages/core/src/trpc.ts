/**
 * tRPC setup: the base procedures every tool is built from, and the middlewares that
 * enforce authentication, scopes and idempotency with one transaction per write.
 * Tools never repeat these rules: `writeTool` also declares the `idempotency_key` argument.
 */
import { createHash } from 'node:crypto';
import { initTRPC } from '@trpc/server';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { TX_OPTIONS, type ToolContext, type Services, type Db } from './context.ts';
import { requiredScope, type ToolMeta } from './meta.ts';
import { ToolError, validationError, isKnownRollback, outcomeUnknownError } from './errors.ts';
import { idempotencyKey } from './text.ts';
import { beginInboxCounters, flushInboxCounters } from './domain/inbox.ts';

const t = initTRPC.context<ToolContext>().meta<ToolMeta>().create({ isServer: true, allowOutsideOfServer: true });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** SHA-256 of the canonical JSON (RFC 8785) of the arguments without the idempotency key. */
export function requestHash(args: unknown): string {
  const copy = args && typeof args === 'object' && !Array.isArray(args) ? { ...(args as Record<string, unknown>) } : args;
  if (copy && typeof copy === 'object') delete (copy as Record<string, unknown>).idempotency_key;
  return createHash('sha256')
    .update(canonicalize(copy ?? {}) ?? '')
    .digest('hex');
}

/**
 * Authentication and the scope rule (`requiredScope`, meta.ts): a missing credential is
 * UNAUTHENTICATED; a missing scope is FORBIDDEN with details.required_scope. Narrows `ctx.auth`
 * to a non-null AuthInfo for every tool built on it, so handlers need no `ctx.auth!`.
 */
const authed = t.middleware(async ({ ctx, meta, type, next }) => {
  if (!meta) throw new ToolError('INTERNAL', 'tool without metadata');
  if (!ctx.auth) throw new ToolError('UNAUTHENTICATED', 'This tool needs a credential: send "Authorization: Bearer <api key>".');
  const required = requiredScope(type === 'query' ? 'read' : 'write');
  if (!ctx.auth.scopes.includes(required)) {
    throw new ToolError('FORBIDDEN', `This credential lacks the scope ${required}.`, {
      details: { required_scope: required },
      suggestedAction: `Use a credential with scope ${required}.`,
    });
  }
  return next({ ctx: { auth: ctx.auth } });
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
const mergeIdempotencyHeader = t.middleware(async ({ ctx, getRawInput, next }) => {
  if (ctx.idempotencyKeyHeader === undefined) return next();
  const raw = await getRawInput();
  const args: Record<string, unknown> =
    raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : {};
  const header = ctx.idempotencyKeyHeader;
  if (args.idempotency_key !== undefined && args.idempotency_key !== header) {
    throw validationError(
      'idempotency_key',
      'differs from the Idempotency-Key header; send one key, or the same in both',
      'idempotency_key_mismatch',
    );
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
const writeTx = t.middleware(async ({ ctx, meta, path, input, getRawInput, next }) => {
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
  // The key was checked by writeTool's input (`idempotencyKey`, text.ts) and taken out of the raw arguments (`stripKey`).
  const key = (input as { idempotency_key: string }).idempotency_key;
  const raw = await getRawInput();
  const toolArgs = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const agentId = ctx.auth!.agentId;
  const hash = requestHash(toolArgs);

  return inTransaction(ctx.services, async (tx) => {
    const inserted = await tx.$executeRaw`
      INSERT INTO idempotency_records (agent_id, tool, key, request_hash, response)
      VALUES (${agentId}::uuid, ${path}, ${key}, ${hash}, 'null'::jsonb)
      ON CONFLICT DO NOTHING`;
    if (inserted === 0) {
      const rec = await tx.idempotencyRecord.findUnique({ where: { agentId_tool_key: { agentId, tool: path, key } } });
      if (!rec)
        throw new ToolError('REQUEST_IN_PROGRESS', 'The same idempotency key is in use by a call that has not finished.', {
          retryAfter: 1,
        });
      if (rec.requestHash !== hash) {
        throw new ToolError('IDEMPOTENCY_KEY_REUSED', `idempotency_key "${key}" was already used for ${path} with different arguments.`, {
          details: { idempotency_key: key, tool: path },
        });
      }
      if (mode === 'never_replay') {
        throw new ToolError(
          'IDEMPOTENCY_REPLAY_UNAVAILABLE',
          `${path} already ran with idempotency_key "${key}"; its result is shown only once and is never replayed.`,
          {
            details: { idempotency_key: key, tool: path },
          },
        );
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

/** Takes `idempotency_key` out of the raw arguments once writeTool's input has parsed it, so the tool's strict input never sees it. */
const stripKey = t.middleware(async ({ getRawInput, next }) => {
  const raw = await getRawInput();
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return next();
  const rest: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  delete rest.idempotency_key;
  return next({ getRawInput: async () => rest });
});

/** Base for read tools (scope svc:read; no side effects; ctx.auth is non-null). */
export const readTool = t.procedure.use(authed).use(readDb);
/**
 * Base for write tools (scope svc:write; ctx.auth is non-null): declares the `idempotency_key`
 * argument (from `idempotencyKey`, text.ts) and runs the call in one transaction with its
 * idempotency record. The tool's own `.input()` is a strict object without the key.
 */
export const writeTool = t.procedure
  .use(authed)
  .use(mergeIdempotencyHeader)
  .input(z.object({ idempotency_key: idempotencyKey }))
  .use(stripKey)
  .use(writeTx);
/**
 * Base for the one public write (register_agent): no credential, no idempotency key, one
 * transaction. Its metadata says so (auth 'none', idempotency 'none') for the catalogue.
 */
export const publicWriteTool = t.procedure.meta({ auth: 'none', idempotency: 'none' } as ToolMeta).use(writeTx);
