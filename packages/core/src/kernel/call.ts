/**
 * Running a tool: `callTool` refuses arguments no tool can take (NUL, lone surrogates, excessive
 * nesting: safe-input.ts) before any middleware or database work, runs the tool, and returns `data`
 * (with `inbox` when the caller has unread items, and `replayed: true` when the result is the replay
 * of an earlier call with the same key).
 */
import type { ToolContext, Services, AuthInfo, CallInfo } from './context.ts';
import { ToolError, toToolError } from './errors.ts';
import { inboxSummaryFor } from './inbox-summary.ts';
import { callableBy } from './inbox-calls.ts';
import { inputIssues } from './safe-input.ts';
import { helpfulError } from './explain.ts';
import { runProcedure } from './run-procedure.ts';
import type { ToolDescriptor } from './catalogue.ts';

export interface CallRequest {
  services: Services;
  auth: AuthInfo | null;
  requestId: string;
  idempotencyKeyHeader?: string | undefined;
}

/** A tool's tRPC procedure, called as tRPC's own caller calls it. */
export type Procedure = ((opts: {
  path: string;
  getRawInput: () => Promise<unknown>;
  ctx: ToolContext;
  type: 'query' | 'mutation' | 'subscription';
  signal: undefined;
  batchIndex: number;
}) => Promise<Record<string, unknown>>) & {
  _def: { type: 'query' | 'mutation' | 'subscription'; meta?: { static?: boolean }; middlewares: readonly unknown[] };
};

/** What a call needs from the registry: the descriptors, the procedures, the unknown-tool error, the static answers kept so far. */
export interface CallTable {
  tools: ReadonlyMap<string, ToolDescriptor>;
  procedures: Record<string, Procedure>;
  unknownTool: (name: string) => ToolError;
  /** Static tools' answers by `${name}\0${scopes}` (at most 64). */
  staticAnswers: Map<string, Record<string, unknown>>;
}

/** Runs the tool `name` with `args` for `req`'s caller. */
export async function callTool(
  { tools, procedures, unknownTool, staticAnswers }: CallTable,
  name: string,
  args: unknown,
  req: CallRequest,
): Promise<{ data: Record<string, unknown>; call: CallInfo }> {
  const tool = tools.get(name);
  if (!tool) throw unknownTool(name);
  // Before any middleware or database work, for every tool (safe-input.ts).
  const unsafe = [
    ...inputIssues(args ?? {}),
    ...(req.idempotencyKeyHeader === undefined ? [] : inputIssues(req.idempotencyKeyHeader, 'Idempotency-Key')),
  ];
  if (unsafe.length) {
    throw new ToolError('VALIDATION_ERROR', `Invalid arguments: ${unsafe.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      details: { issues: unsafe },
    });
  }
  const call: CallInfo = { replayed: false };
  const ctx: ToolContext = {
    services: req.services,
    auth: req.auth,
    requestId: req.requestId,
    idempotencyKeyHeader: req.idempotencyKeyHeader,
    db: req.services.prisma,
    call,
  };
  const proc = procedures[name]!;
  // A tool that needs no credential (register_agent) answers for whoever it created, not for the caller: neither the
  // caller's scopes nor the caller's inbox belong in its result.
  const callerAuth = tool.auth === 'required' ? ctx.auth : null;
  // A static tool's answer for a caller who may call it (any other caller goes through the procedure, which refuses).
  const staticKey =
    tool.kind === 'read' && tool.scope && ctx.auth?.scopes.includes(tool.scope) && proc._def.meta?.static === true
      ? `${name}\0${ctx.auth.scopes.join(' ')}`
      : undefined;
  let data = staticKey === undefined ? undefined : staticAnswers.get(staticKey);
  if (data) call.static = true;
  else {
    try {
      // The procedure's middlewares and resolver, as calling `proc` itself runs them (run-procedure.ts).
      data = (await runProcedure(proc._def, {
        path: name,
        getRawInput: async () => args ?? {},
        ctx,
        type: proc._def.type,
        signal: undefined,
        batchIndex: 0,
      })) as Record<string, unknown>;
    } catch (e) {
      throw await helpfulError(toToolError(e), tool, args, ctx);
    }
    if (call.replayed) data = { ...data, replayed: true };
    // suggested_next names only tools this credential may call: drop entries whose tool needs a missing scope.
    if (callerAuth && Array.isArray(data.suggested_next)) {
      const scopes = callerAuth.scopes;
      data = {
        ...data,
        suggested_next: (data.suggested_next as string[]).filter((s) => {
          const scope = tools.get(s.split(':', 1)[0]!.trim())?.scope;
          return !scope || scopes.includes(scope);
        }),
      };
    }
    if (staticKey !== undefined && staticAnswers.size < 64) {
      staticAnswers.set(staticKey, deepFreeze(data));
      call.static = true;
    }
  }
  const agentId = callerAuth?.agentId;
  if (agentId) {
    const source = req.services.inboxSummaries;
    // After a write the change is committed: a failing inbox read must not turn the answer into an error
    // (the caller would retry something that already happened); the inbox block is left out instead.
    const inbox = await (
      call.inbox !== undefined
        ? Promise.resolve(call.inbox ?? undefined) // a batched write answered it with its own statement
        : source
          ? source.get(agentId, { fresh: tool.kind === 'write' })
          : inboxSummaryFor(req.services.prisma, agentId)
    ).catch((e: unknown) => {
      if (tool.kind === 'write') return undefined;
      throw toToolError(e);
    });
    if (inbox) {
      data = { ...data, inbox: callableBy(inbox, (t) => tools.get(t)?.scope ?? undefined, ctx.auth!.scopes) };
      call.static = false; // the answer now differs from the stored one
    }
  }
  return { data, call };
}

/** `value` with every object and array in it frozen (a stored answer is shared by every call). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
