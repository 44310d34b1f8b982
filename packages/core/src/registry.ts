/**
 * The registry: the one place that turns the tRPC router into everything the adapters serve.
 *
 * - `catalogue`: per tool, its JSON Schema 2020-12 input and output, metadata, scope; generated once.
 * - `version`: SHA-256 of the catalogue (the ETag of GET /v1/tools, interface-spec "Versioning").
 * - `callTool(name, args, ctx)`: runs a tool, returns `data` (with `inbox` when the caller has unread items).
 * - `validateArgs(name, args)`: the sandbox check against the live schema.
 *
 * Both `callTool` and `validateArgs` first refuse arguments no tool can take (NUL, lone
 * surrogates, excessive nesting: safe-input.ts), so that rule holds for every tool by construction.
 *
 * It refuses to start on a tool without metadata or output schema. Reading tRPC's router
 * internals (`_def.procedures`, `_def.inputs`, `_def.output`, `_def.meta`) happens only here;
 * test/registry.test.ts pins that shape for the pinned @trpc/server version.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import canonicalize from 'canonicalize';
import type { AnyTRPCRouter } from '@trpc/server';
import type { ToolMeta } from './meta.ts';
import type { ToolContext, Services, AuthInfo, CallInfo } from './context.ts';
import { ToolError, toToolError, issuesFromZod, type ErrorCode, type ValidationIssue } from './errors.ts';
import { createCallerFactory } from './trpc.ts';
import { inboxSummaryFor } from './domain/inbox-summary.ts';
import { inputIssues } from './safe-input.ts';

/** Errors every tool can raise (in addition to its own `meta.errors`). */
export const COMMON_ERRORS: ErrorCode[] = ['VALIDATION_ERROR', 'UNAUTHENTICATED', 'FORBIDDEN', 'RATE_LIMITED', 'TRANSIENT_CONFLICT', 'INTERNAL', 'SERVICE_UNAVAILABLE'];

export type JsonSchema = Record<string, unknown>;

export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  kind: 'read' | 'write';
  area: string;
  /** Scope required: svc:read for read tools, svc:write for write tools; null when no credential is needed. */
  scope: 'svc:read' | 'svc:write' | null;
  auth: 'required' | 'none';
  idempotency: 'replay' | 'never_replay' | 'none' | null;
  annotations: ToolMeta['annotations'];
  errors: ErrorCode[];
  /** True when the input has required properties (then a REST body is mandatory). */
  hasRequiredArgs: boolean;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
}

interface ProcedureDef {
  meta?: ToolMeta;
  inputs: z.ZodType[];
  output?: z.ZodType;
  type: 'query' | 'mutation' | 'subscription';
}

export interface Registry {
  tools: ReadonlyMap<string, ToolDescriptor>;
  /** Tool descriptors in catalogue order. */
  catalogue: ToolDescriptor[];
  /** Hex digest identifying this catalogue; changes whenever any tool or schema changes. */
  version: string;
  has(name: string): boolean;
  /** Validates args against the live input schema without running anything (the sandbox). */
  validateArgs(name: string, args: unknown): { ok: true } | { ok: false; issues: ValidationIssue[] };
  /**
   * Runs a tool. Throws ToolError (NOT_FOUND for an unknown tool).
   * @returns `data` (the tool's output; `inbox` added when the caller has unread items) and call info.
   */
  callTool(name: string, args: unknown, req: CallRequest): Promise<{ data: Record<string, unknown>; call: CallInfo }>;
}

export interface CallRequest {
  services: Services;
  auth: AuthInfo | null;
  requestId: string;
  idempotencyKeyHeader?: string | undefined;
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const js = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' }) as JsonSchema;
  return js;
}

/** Errors the idempotency middleware adds to write tools (DESIGN.md §4), so tools need not list them. */
function idempotencyErrors(meta: ToolMeta, kind: 'read' | 'write'): ErrorCode[] {
  if (kind !== 'write') return [];
  const mode = meta.idempotency ?? 'replay';
  if (mode === 'none') return [];
  return mode === 'never_replay' ? ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REPLAY_UNAVAILABLE'] : ['IDEMPOTENCY_KEY_REUSED', 'REQUEST_IN_PROGRESS'];
}

/** Builds the registry from the router; throws at start-up on a malformed tool. */
export function buildRegistry(appRouter: AnyTRPCRouter): Registry {
  const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: ProcedureDef }> }).procedures;
  const tools = new Map<string, ToolDescriptor>();
  const inputSchemas = new Map<string, z.ZodType>();

  for (const [name, proc] of Object.entries(procedures)) {
    const def = proc._def;
    if (!/^[a-z][a-z0-9_]{1,63}$/.test(name)) throw new Error(`registry: tool name "${name}" must be snake_case`);
    const meta = def.meta;
    if (!meta || !meta.title || !meta.description || !meta.annotations) throw new Error(`registry: tool "${name}" has no metadata`);
    if (!def.output) throw new Error(`registry: tool "${name}" has no output schema`);
    if (def.inputs.length !== 1 || !def.inputs[0]) throw new Error(`registry: tool "${name}" must have exactly one input schema`);
    if (def.type === 'subscription') throw new Error(`registry: tool "${name}": tools are queries (read) or mutations (write)`);
    const kind = def.type === 'query' ? 'read' : 'write';
    if (meta.annotations.readOnlyHint !== (kind === 'read')) throw new Error(`registry: tool "${name}": readOnlyHint must be ${kind === 'read'}`);
    const input = def.inputs[0];
    const inputSchema = toJsonSchema(input, 'input');
    if (inputSchema.type !== 'object' || inputSchema.additionalProperties !== false) {
      throw new Error(`registry: tool "${name}" input must be a z.strictObject`);
    }
    const outputSchema = toJsonSchema(def.output, 'output');
    const auth = meta.auth ?? 'required';
    tools.set(name, {
      name,
      title: meta.title,
      description: meta.description,
      kind,
      area: meta.area,
      scope: auth === 'none' ? null : kind === 'read' ? 'svc:read' : 'svc:write',
      auth,
      idempotency: kind === 'write' ? (meta.idempotency ?? 'replay') : null,
      annotations: meta.annotations,
      errors: [...new Set([...COMMON_ERRORS, ...idempotencyErrors(meta, kind), ...meta.errors])],
      hasRequiredArgs: Array.isArray(inputSchema.required) && inputSchema.required.length > 0,
      input_schema: inputSchema,
      output_schema: outputSchema,
    });
    inputSchemas.set(name, input);
  }

  const catalogue = [...tools.values()];
  const version = createHash('sha256').update(canonicalize(catalogue) ?? '').digest('hex').slice(0, 32);
  const createCaller = createCallerFactory(appRouter);

  return {
    tools,
    catalogue,
    version,
    has: (name) => tools.has(name),
    validateArgs(name, args) {
      const schema = inputSchemas.get(name);
      if (!schema) throw new ToolError('NOT_FOUND', `Unknown tool "${name}".`, { suggestedAction: 'List the tools with GET /v1/tools.' });
      const unsafe = inputIssues(args ?? {});
      if (unsafe.length) return { ok: false, issues: unsafe };
      const r = schema.safeParse(args ?? {});
      return r.success ? { ok: true } : { ok: false, issues: issuesFromZod(r.error.issues) };
    },
    async callTool(name, args, req) {
      const tool = tools.get(name);
      if (!tool) throw new ToolError('NOT_FOUND', `Unknown tool "${name}".`, { suggestedAction: 'List the tools with GET /v1/tools.' });
      // Before any middleware or database work, for every tool (safe-input.ts).
      const unsafe = [...inputIssues(args ?? {}), ...(req.idempotencyKeyHeader === undefined ? [] : inputIssues(req.idempotencyKeyHeader, 'Idempotency-Key'))];
      if (unsafe.length) {
        throw new ToolError('VALIDATION_ERROR', `Invalid arguments: ${unsafe.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { details: { issues: unsafe } });
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
      const caller = createCaller(ctx) as unknown as Record<string, (input: unknown) => Promise<Record<string, unknown>>>;
      let data: Record<string, unknown>;
      try {
        data = await caller[name]!(args ?? {});
      } catch (e) {
        throw toToolError(e);
      }
      // suggested_next names only tools this credential may call (issue 4): drop entries whose tool needs a missing scope.
      if (ctx.auth && Array.isArray(data.suggested_next)) {
        const scopes = ctx.auth.scopes;
        data = {
          ...data,
          suggested_next: (data.suggested_next as string[]).filter((s) => {
            const scope = tools.get(s.split(':', 1)[0]!.trim())?.scope;
            return !scope || scopes.includes(scope);
          }),
        };
      }
      const agentId = ctx.auth?.agentId;
      if (agentId) {
        const source = req.services.inboxSummaries;
        // After a write the change is committed: a failing inbox read must not turn the answer into an error
        // (the caller would retry something that already happened); the inbox block is left out instead.
        const inbox = await (source ? source.get(agentId, { fresh: tool.kind === 'write' }) : inboxSummaryFor(req.services.prisma, agentId)).catch((e: unknown) => {
          if (tool.kind === 'write') return undefined;
          throw toToolError(e);
        });
        if (inbox) data = { ...data, inbox };
      }
      return { data, call };
    },
  };
}
