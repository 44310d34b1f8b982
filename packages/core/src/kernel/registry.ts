/**
 * The registry: the one place that turns the tRPC router into everything the adapters serve.
 *
 * - `catalogue`: per tool, its JSON Schema 2020-12 input and output (emitted by json-schema.ts: portable,
 *   small, shared shapes once per output schema, the result envelope left to `envelope`), metadata, scope, and
 *   its description ending in an "Errors:" sentence generated from `meta.errors`; generated once.
 * - `version`: SHA-256 of the catalogue (the ETag of GET /v1/tools).
 * - `callTool(name, args, ctx)`: runs a tool, returns `data` (with `inbox` when the caller has unread
 *   items, and `replayed: true` when the result is the replay of an earlier call with the same key).
 * - `validateArgs(name, args)`: the sandbox check against the live schema.
 * - `unknownTool(name)`: the one NOT_FOUND for a tool name, naming the closest tools.
 *
 * Both `callTool` and `validateArgs` first refuse arguments no tool can take (NUL, lone
 * surrogates, excessive nesting: safe-input.ts), so that rule holds for every tool by construction.
 *
 * It refuses to start on a tool without metadata or output schema. Reading tRPC's router
 * internals (`_def.procedures`, `_def.inputs`, `_def.output`, `_def.meta`) happens only here;
 * test/kernel/registry.test.ts pins that shape for the pinned @trpc/server version.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import canonicalize from 'canonicalize';
import type { AnyTRPCRouter } from '@trpc/server';
import { requiredScope, type ToolMeta, type ToolErrors, type Scope } from './meta.ts';
import type { ToolExample } from './examples.ts';
import type { ToolContext, Services, AuthInfo, CallInfo } from './context.ts';
import { ToolError, toToolError, issuesFromZod, type ErrorCode, type ValidationIssue } from './errors.ts';
import { inboxSummaryFor } from './inbox-summary.ts';
import { callableBy } from './inbox-calls.ts';
import { inputIssues } from './safe-input.ts';
import { amountExample } from './money.ts';
import { closestNames, didYouMean } from './suggest.ts';
import { AMOUNT_RULE, resultEnvelope, RESULT_ENVELOPE_TEXT } from './text.ts';
import { toJsonSchema, withoutEnvelope, assertOneShapePerName, type JsonSchema } from './json-schema.ts';
import { outputSchemaOf } from './built-output.ts';

/** Errors every tool can raise (in addition to its own `meta.errors`). */
export const COMMON_ERRORS: ErrorCode[] = [
  'VALIDATION_ERROR',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'RATE_LIMITED',
  'TRANSIENT_CONFLICT',
  'INTERNAL',
  'SERVICE_UNAVAILABLE',
];

export type { JsonSchema } from './json-schema.ts';
export { portable, withEnvelope, expandRequired } from './json-schema.ts';

export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  kind: 'read' | 'write';
  area: string;
  /** Scope required: svc:read for read tools, svc:write for write tools; null when no credential is needed. */
  scope: Scope | null;
  auth: 'required' | 'none';
  idempotency: 'replay' | 'never_replay' | 'none' | null;
  annotations: ToolMeta['annotations'];
  errors: ErrorCode[];
  /** True when the input has required properties (then a REST body is mandatory). */
  hasRequiredArgs: boolean;
  input_schema: JsonSchema;
  output_schema: JsonSchema;
}

/** The tool's own input schema plus the base's properties (writeTool's required `idempotency_key`, a previewable tool's `dry_run`), listed last. */
function withBase(own: JsonSchema, bases: JsonSchema[]): JsonSchema {
  const props = Object.assign({}, ...bases.map((b) => b.properties ?? {})) as Record<string, unknown>;
  return {
    ...own,
    properties: { ...(own.properties as Record<string, unknown>), ...props },
    required: [...((own.required as string[] | undefined) ?? []), ...bases.flatMap((b) => (b.required as string[] | undefined) ?? [])],
  };
}

/**
 * Parses args with each of a tool's input schemas, as the tool call does: the base's schemas
 * (`idempotency_key`, `dry_run`) see the arguments, the tool's own strict schema sees them without
 * the base's keys. All issues.
 */
function parseIssues(parsers: z.ZodType[], baseKeys: readonly string[], args: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  parsers.forEach((p, i) => {
    let input = args;
    if (parsers.length > 1 && i === parsers.length - 1 && args && typeof args === 'object' && !Array.isArray(args)) {
      const rest: Record<string, unknown> = { ...(args as Record<string, unknown>) };
      for (const k of baseKeys) delete rest[k];
      input = rest;
    }
    const r = p.safeParse(input);
    if (!r.success) issues.push(...issuesFromZod(r.error.issues));
  });
  return issues;
}

interface ProcedureDef {
  meta?: ToolMeta;
  inputs: z.ZodType[];
  /** A zod schema, or builtOutput's parse function carrying it (built-output.ts). */
  output?: unknown;
  type: 'query' | 'mutation' | 'subscription';
}

export interface Registry {
  tools: ReadonlyMap<string, ToolDescriptor>;
  /** Tool descriptors in catalogue order. */
  catalogue: ToolDescriptor[];
  /** Hex digest identifying this catalogue; changes whenever any tool or schema changes. */
  version: string;
  /**
   * The fields every result has besides the tool's own (suggested_next, inbox, replayed): described once here
   * and in `envelopeText`, left out of each tool's output_schema (objects there are open, so results validate).
   */
  envelope: JsonSchema;
  envelopeText: string;
  /**
   * Tool name → its examples (`meta.examples`), for docs and OpenAPI; not part of the catalogue, so not in MCP tools/list.
   * Optional for stand-in registries of adapter tests; buildRegistry always sets it.
   */
  examples?: ReadonlyMap<string, readonly ToolExample[]>;
  has(name: string): boolean;
  /** Validates args against the live input schema without running anything (the sandbox). */
  validateArgs(name: string, args: unknown): { ok: true } | { ok: false; issues: ValidationIssue[] };
  /**
   * Runs a tool. Throws ToolError (NOT_FOUND for an unknown tool).
   * @returns `data` (the tool's output; `inbox` added when the caller has unread items) and call info.
   */
  callTool(name: string, args: unknown, req: CallRequest): Promise<{ data: Record<string, unknown>; call: CallInfo }>;
  /** The NOT_FOUND error for an unknown tool name, naming the closest tools (REST and MCP alike). */
  unknownTool(name: string): ToolError;
}

export interface CallRequest {
  services: Services;
  auth: AuthInfo | null;
  requestId: string;
  idempotencyKeyHeader?: string | undefined;
}

/** The "Errors:" sentence of a description, generated from the tool's code → reason map. */
export function errorsSentence(errors: ToolErrors): string {
  const entries = Object.entries(errors);
  if (entries.length === 0) return '';
  return `Errors: ${entries.map(([code, reason]) => (reason ? `${code} (${reason})` : code)).join('; ')}.`;
}

/** Errors the idempotency middleware adds to write tools, so tools need not list them. */
function idempotencyErrors(meta: ToolMeta, kind: 'read' | 'write'): ErrorCode[] {
  if (kind !== 'write') return [];
  const mode = meta.idempotency ?? 'replay';
  if (mode === 'none') return [];
  return mode === 'never_replay'
    ? ['IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_REPLAY_UNAVAILABLE']
    : ['IDEMPOTENCY_KEY_REUSED', 'REQUEST_IN_PROGRESS'];
}

/** Builds the registry from the router; throws at start-up on a malformed tool. */
export function buildRegistry(appRouter: AnyTRPCRouter): Registry {
  const procedures = (appRouter._def as unknown as { procedures: Record<string, Procedure> }).procedures;
  const tools = new Map<string, ToolDescriptor>();
  const envelope = toJsonSchema(resultEnvelope, 'output');
  const inputSchemas = new Map<string, { parsers: z.ZodType[]; baseKeys: string[] }>();
  const examples = new Map<string, readonly ToolExample[]>();

  for (const [name, proc] of Object.entries(procedures)) {
    const def = proc._def;
    if (!/^[a-z][a-z0-9_]{1,63}$/.test(name)) throw new Error(`registry: tool name "${name}" must be snake_case`);
    const meta = def.meta;
    if (!meta || !meta.title || !meta.description || !meta.annotations) throw new Error(`registry: tool "${name}" has no metadata`);
    if (!def.output) throw new Error(`registry: tool "${name}" has no output schema`);
    if (def.type === 'subscription') throw new Error(`registry: tool "${name}": tools are queries (read) or mutations (write)`);
    const kind = def.type === 'query' ? 'read' : 'write';
    const auth = meta.auth ?? 'required';
    const idempotency = kind === 'write' ? (meta.idempotency ?? 'replay') : null;
    // writeTool declares idempotency_key as its own input (trpc.ts), a previewable write also dry_run; the tool adds exactly one more.
    const keyed = idempotency !== null && idempotency !== 'none';
    if (!(keyed ? [2, 3] : [1]).includes(def.inputs.length) || def.inputs.some((i) => !i)) {
      throw new Error(`registry: tool "${name}" must have exactly one input schema of its own`);
    }
    if (meta.annotations.readOnlyHint !== (kind === 'read'))
      throw new Error(`registry: tool "${name}": readOnlyHint must be ${kind === 'read'}`);
    const parsers = def.inputs;
    const own = toJsonSchema(parsers.at(-1)!, 'input');
    if (own.type !== 'object' || own.additionalProperties !== false) {
      throw new Error(`registry: tool "${name}" input must be a z.strictObject`);
    }
    const bases = parsers.slice(0, -1).map((p) => toJsonSchema(p, 'input'));
    const inputSchema = keyed ? withBase(own, bases) : own;
    const outputSchema = withoutEnvelope(toJsonSchema(outputSchemaOf(def.output), 'output'), envelope);
    const sentence = errorsSentence(meta.errors);
    tools.set(name, {
      name,
      title: meta.title,
      description: sentence ? `${meta.description} ${sentence}` : meta.description,
      kind,
      area: meta.area,
      scope: auth === 'none' ? null : requiredScope(kind),
      auth,
      idempotency,
      annotations: meta.annotations,
      errors: [...new Set([...COMMON_ERRORS, ...idempotencyErrors(meta, kind), ...(Object.keys(meta.errors) as ErrorCode[])])],
      hasRequiredArgs: Array.isArray(inputSchema.required) && inputSchema.required.length > 0,
      input_schema: inputSchema,
      output_schema: outputSchema,
    });
    inputSchemas.set(name, { parsers, baseKeys: bases.flatMap((b) => Object.keys(b.properties ?? {})) });
    if (meta.examples?.length) examples.set(name, meta.examples);
  }

  assertOneShapePerName([...tools.values()].map((t) => ({ name: t.name, schema: t.output_schema })));

  // One order wherever the module is loaded (tsx sorts each area's namespace by name, vitest keeps
  // insertion order): areas in router order, tools by name within an area. The version (ETag) and
  // GET /v1/tools then agree across processes and loaders.
  const areaRank = new Map<string, number>();
  for (const t of tools.values()) if (!areaRank.has(t.area)) areaRank.set(t.area, areaRank.size);
  const catalogue = [...tools.values()].sort(
    (a, b) => areaRank.get(a.area)! - areaRank.get(b.area)! || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  const version = createHash('sha256')
    .update(canonicalize({ catalogue, envelope }) ?? '')
    .digest('hex')
    .slice(0, 32);
  const names = [...tools.keys()];
  // Answers of static tools (meta.static: the same for every caller and call), per set of scopes (suggested_next is
  // filtered by them): computed by the first call through the procedure, then served from memory.
  const staticAnswers = new Map<string, Record<string, unknown>>();
  const isStatic = (name: string) => procedures[name]?._def.meta?.static === true;

  function unknownTool(name: string): ToolError {
    const near = closestNames(name, names);
    const hint = didYouMean(near);
    return new ToolError('NOT_FOUND', `Unknown tool "${name}"${hint ? `; ${hint}` : '.'}`, {
      details: { tool: name, did_you_mean: near },
      suggestedAction: near.length
        ? `Call ${near[0]}, or list the tools with GET /v1/tools (MCP: tools/list).`
        : 'List the tools with GET /v1/tools (MCP: tools/list).',
    });
  }

  return {
    tools,
    catalogue,
    version,
    envelope,
    envelopeText: RESULT_ENVELOPE_TEXT,
    examples,
    has: (name) => tools.has(name),
    unknownTool,
    validateArgs(name, args) {
      const schemas = inputSchemas.get(name);
      if (!schemas) throw unknownTool(name);
      const unsafe = inputIssues(args ?? {});
      if (unsafe.length) return { ok: false, issues: unsafe };
      const issues = parseIssues(schemas.parsers, schemas.baseKeys, args ?? {});
      return issues.length === 0 ? { ok: true } : { ok: false, issues: explainIssues(issues, tools.get(name)!.input_schema) };
    },
    async callTool(name, args, req) {
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
      // A static tool's answer for a caller who may call it (any other caller goes through the procedure, which refuses).
      const staticKey =
        tool.kind === 'read' && tool.scope && ctx.auth?.scopes.includes(tool.scope) && isStatic(name)
          ? ctx.auth.scopes.join(' ')
          : undefined;
      let data = staticKey === undefined ? undefined : staticAnswers.get(`${name}\0${staticKey}`);
      if (data) call.static = true;
      else {
        data = await runProcedure(procedures[name]!, name, args ?? {}, ctx, tool);
        if (call.replayed) data = { ...data, replayed: true };
        // A tool that needs no credential (register_agent) answers for whoever it created, not for the caller: neither the
        // caller's scopes nor the caller's inbox belong in its result.
        const answerAuth = tool.auth === 'required' ? ctx.auth : null;
        // suggested_next names only tools this credential may call (issue 4): drop entries whose tool needs a missing scope.
        if (answerAuth && Array.isArray(data.suggested_next)) {
          const scopes = answerAuth.scopes;
          data = {
            ...data,
            suggested_next: (data.suggested_next as string[]).filter((s) => {
              const scope = tools.get(s.split(':', 1)[0]!.trim())?.scope;
              return !scope || scopes.includes(scope);
            }),
          };
        }
        if (staticKey !== undefined && staticAnswers.size < 64) {
          staticAnswers.set(`${name}\0${staticKey}`, deepFreeze(data));
          call.static = true;
        }
      }
      const callerAuth = tool.auth === 'required' ? ctx.auth : null;
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
    },
  };
}

/** `value` with every object and array in it frozen (a stored answer is shared by every call). */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

type Procedure = ((opts: {
  path: string;
  getRawInput: () => Promise<unknown>;
  ctx: ToolContext;
  type: ProcedureDef['type'];
  signal: undefined;
  batchIndex: number;
}) => Promise<Record<string, unknown>>) & { _def: ProcedureDef };

/**
 * Runs the tool's procedure (its middlewares, input and output validation, handler) as tRPC's caller would, without
 * building a caller per call; a failure becomes the tool's ToolError, made more helpful for validation errors.
 */
async function runProcedure(
  proc: Procedure,
  name: string,
  args: unknown,
  ctx: ToolContext,
  tool: ToolDescriptor,
): Promise<Record<string, unknown>> {
  try {
    return await proc({ path: name, getRawInput: async () => args, ctx, type: proc._def.type, signal: undefined, batchIndex: 0 });
  } catch (e) {
    throw await helpfulError(toToolError(e), tool, args, ctx);
  }
}

/** Property names a JSON Schema allows at a dotted issue path ("payers.0" → the payer item's keys). */
function propertiesAt(schema: JsonSchema, path: string[]): string[] {
  let nodes: JsonSchema[] = [schema];
  for (const seg of path) {
    const next: JsonSchema[] = [];
    for (const n of nodes.flatMap(branches)) {
      if (/^\d+$/.test(seg) && n.items) next.push(n.items as JsonSchema);
      const p = (n.properties as Record<string, JsonSchema> | undefined)?.[seg];
      if (p) next.push(p);
    }
    nodes = next;
  }
  return [...new Set(nodes.flatMap(branches).flatMap((n) => Object.keys((n.properties as object | undefined) ?? {})))];
}

function branches(n: JsonSchema): JsonSchema[] {
  const alts = [...((n.anyOf as JsonSchema[] | undefined) ?? []), ...((n.oneOf as JsonSchema[] | undefined) ?? [])];
  return alts.length ? [n, ...alts.flatMap(branches)] : [n];
}

/** Unknown keys get a "did you mean" from the keys the schema allows at that place. */
function explainIssues(issues: ValidationIssue[], schema: JsonSchema): ValidationIssue[] {
  return issues.map((i) => {
    if (i.code !== 'unrecognized_keys') return i;
    const segs = i.path === '(root)' ? [] : i.path.split('.');
    const key = segs.pop()!;
    const hint = didYouMean(closestNames(key, propertiesAt(schema, segs), 2));
    return { ...i, message: hint ? `unknown key; ${hint}` : `unknown key; allowed: ${propertiesAt(schema, segs).join(', ')}` };
  });
}

/**
 * Makes a VALIDATION_ERROR more helpful: unknown keys name the closest allowed key; an amount that
 * is not an integer shows an example in the group's currency (when the caller is a member).
 */
async function helpfulError(err: ToolError, tool: ToolDescriptor, args: unknown, ctx: ToolContext): Promise<ToolError> {
  const issues = err.details?.issues;
  if (err.kittyCode !== 'VALIDATION_ERROR' || !Array.isArray(issues) || issues.length === 0) return err;
  let explained = explainIssues(issues as ValidationIssue[], tool.input_schema);
  if (explained.some((i) => i.message === AMOUNT_RULE)) {
    const groupId = (args as { group_id?: unknown } | null)?.group_id;
    const example =
      typeof groupId === 'string' && ctx.auth ? await amountExample(ctx.services.prisma, groupId, ctx.auth.agentId) : undefined;
    if (example)
      explained = explained.map((i) =>
        i.message === AMOUNT_RULE ? { ...i, message: `must be an integer in minor units of ${example}` } : i,
      );
  }
  return new ToolError('VALIDATION_ERROR', `Invalid arguments: ${explained.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
    details: { ...err.details, issues: explained },
    suggestedAction: err.suggestedAction,
  });
}
