/**
 * The catalogue: per tool, its JSON Schema 2020-12 input and output (emitted by json-schema.ts: portable,
 * small, shared shapes once per output schema, the result envelope left to `envelope`), metadata, scope, and
 * its description ending in an "Errors:" sentence generated from `meta.errors`; generated once,
 * with its version (SHA-256 of the catalogue, the ETag of GET /v1/tools).
 *
 * It refuses to start on a tool without metadata or output schema. Reading tRPC's router
 * internals (`_def.procedures`, `_def.inputs`, `_def.output`, `_def.meta`) happens only here;
 * test/kernel/registry.test.ts pins that shape for the pinned @trpc/server version.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';
import canonicalize from 'canonicalize';
import type { AnyTRPCRouter } from '@trpc/server';
import { requiredScope, type ToolMeta, type ToolErrors, type Scope } from './meta.ts';
import type { ErrorCode } from './errors.ts';
import { resultEnvelope } from './text.ts';
import { toJsonSchema, withoutEnvelope, assertOneShapePerName, type JsonSchema } from './json-schema.ts';
import type { ToolExample } from './examples.ts';
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

interface ProcedureDef {
  meta?: ToolMeta;
  inputs: z.ZodType[];
  /** A zod schema, or builtOutput's parse function carrying it (built-output.ts). */
  output?: unknown;
  type: 'query' | 'mutation' | 'subscription';
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

/** What the registry builds from the router: the descriptors (by name and in catalogue order), the input parsers, the version. */
export interface Catalogue {
  tools: Map<string, ToolDescriptor>;
  catalogue: ToolDescriptor[];
  version: string;
  envelope: JsonSchema;
  /** Per tool: its input schemas as the call parses them, and the base's argument names (`idempotency_key`, `dry_run`). */
  inputSchemas: Map<string, { parsers: z.ZodType[]; baseKeys: string[] }>;
  /** Tool name → its examples (`meta.examples`). */
  examples: Map<string, readonly ToolExample[]>;
}

/** Describes every tool of the router; throws at start-up on a malformed tool. */
export function describeTools(appRouter: AnyTRPCRouter): Catalogue {
  const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: ProcedureDef }> }).procedures;
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
  return { tools, catalogue, version, envelope, inputSchemas, examples };
}
