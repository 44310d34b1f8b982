/**
 * JSON Schema emission for the catalogue: zod → JSON Schema 2020-12, then made portable and small.
 *
 * - Portable: a nullable value is `anyOf [T, null]`, never `type: [T, "null"]` (several MCP clients warn).
 * - Small, same accepted values: a UUID is `format: "uuid"` without zod's 170-character pattern; integers
 *   carry no ±2^53−1 bounds (zod's default for `.int()`, true of every JSON integer a client can send).
 * - Shared shapes written once per schema: a zod schema named with `.meta({ id })` (see `shape` below)
 *   becomes `$defs/<id>` with `$ref: "#/$defs/<id>"` where an output schema uses it twice or more; used
 *   once it is written in place. Input schemas are always fully inlined: many model APIs that receive a
 *   tool's input schema do not follow `$ref`.
 * - No `$schema`: MCP (SEP-1613) and OpenAPI 3.1 (`jsonSchemaDialect`) both mean 2020-12 without one.
 * - Output objects are open (no `additionalProperties: false`): a client that cached the list keeps
 *   validating results when a later version adds a field. Inputs stay closed (strict objects).
 * - Output objects whose properties are all present leave `required` out (`expandRequired` spells it
 *   out again for the typed client and OpenAPI); said once in the envelope text.
 *
 * A `$defs` name means one shape in the whole catalogue (`assertOneShapePerName`, run by the registry at
 * start-up), so the OpenAPI document and the typed client can hoist them into one place.
 */
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** Names a zod schema as a shared shape: emitted once per tool schema under `$defs/<id>` when reused. */
export function shape<T extends z.ZodType>(id: string, schema: T): T {
  return schema.meta({ id }) as T;
}

const SAFE = Number.MAX_SAFE_INTEGER;

/** Keywords that describe a value whatever its type; they stay outside the anyOf branches. */
const ANNOTATIONS = new Set([
  'description',
  'title',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$schema',
  '$id',
  '$comment',
]);

/** zod → the catalogue's JSON Schema for one side of a tool. */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const js = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' }) as JsonSchema;
  const { $schema: _dialect, ...body } = js;
  const small = compact(portable(body), io === 'output') as JsonSchema;
  return inlineRefs(small, io === 'input' ? Infinity : 2);
}

/**
 * Rewrites `type: [T, "null"]` into the equivalent `anyOf: [{type: T, …T's keywords}, {type: "null"}]`,
 * recursively. Same accepted values.
 */
export function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = isMap(k) ? mapValues(v, portable) : portable(v);
  if (Array.isArray(out.type)) {
    const types = out.type as string[];
    const outer: Record<string, unknown> = {};
    const inner: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(out)) {
      if (k === 'type') continue;
      (ANNOTATIONS.has(k) ? outer : inner)[k] = v;
    }
    outer.anyOf = types.map((t) => (t === 'null' ? { type: 'null' } : { type: t, ...inner }));
    return outer;
  }
  return out;
}

/** Drops what says nothing a client can use (see the file comment); `open` also opens objects. */
function compact(node: unknown, open: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compact(n, open));
  if (!node || typeof node !== 'object') return node;
  const n = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    if (k === 'pattern' && n.format === 'uuid') continue;
    if ((k === 'minimum' && v === -SAFE) || (k === 'maximum' && v === SAFE)) continue;
    if (open && k === 'additionalProperties' && v === false) continue;
    out[k] = isMap(k) ? mapValues(v, (x) => compact(x, open)) : compact(v, open);
  }
  if (open && out.properties && typeof out.properties === 'object') {
    // Outputs: an object listing every property as required says so by leaving `required` out (the
    // common case, ~15 KB of the tool list); one with no required property says `required: []`.
    const keys = Object.keys(out.properties);
    const required = (out.required as string[] | undefined) ?? [];
    if (keys.length && keys.every((k) => required.includes(k))) delete out.required;
    else if (keys.length && !out.required) out.required = [];
  }
  return out;
}

/**
 * The reader's side of the output rule in `compact`: every object schema without `required` gets all
 * its properties as required (typed client, OpenAPI). Same meaning, spelled out.
 */
export function expandRequired(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(expandRequired);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) out[k] = isMap(k) ? mapValues(v, expandRequired) : expandRequired(v);
  if (out.properties && typeof out.properties === 'object' && !out.required) out.required = Object.keys(out.properties);
  return out;
}

/**
 * Writes in place every `$defs` entry referenced fewer than `minUses` times (all of them with Infinity),
 * then drops unused entries. A reference's own annotations (its description) win over the definition's.
 */
export function inlineRefs(schema: JsonSchema, minUses: number): JsonSchema {
  let defs = { ...((schema.$defs as Record<string, JsonSchema> | undefined) ?? {}) };
  let root: JsonSchema = { ...schema };
  delete root.$defs;
  for (let round = 0; round < 16; round++) {
    const uses = new Map<string, number>();
    countRefs([root, ...Object.values(defs)], uses);
    const inline = new Set(Object.keys(defs).filter((k) => (uses.get(k) ?? 0) < minUses));
    const unused = Object.keys(defs).filter((k) => !uses.has(k));
    if (inline.size === 0 && unused.length === 0) break;
    const replace = (n: unknown): unknown => replaceRefs(n, defs, inline);
    root = replace(root) as JsonSchema;
    defs = Object.fromEntries(
      Object.entries(defs)
        .filter(([k]) => !inline.has(k) && uses.has(k))
        .map(([k, v]) => [k, replace(v) as JsonSchema]),
    );
  }
  return Object.keys(defs).length ? { ...root, $defs: defs } : root;
}

const REF = /^#\/\$defs\/(.+)$/;

function countRefs(node: unknown, uses: Map<string, number>): void {
  if (Array.isArray(node)) return node.forEach((n) => countRefs(n, uses));
  if (!node || typeof node !== 'object') return;
  const n = node as Record<string, unknown>;
  const m = typeof n.$ref === 'string' ? REF.exec(n.$ref) : null;
  if (m) uses.set(m[1]!, (uses.get(m[1]!) ?? 0) + 1);
  for (const v of Object.values(n)) countRefs(v, uses);
}

function replaceRefs(node: unknown, defs: Record<string, JsonSchema>, inline: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => replaceRefs(n, defs, inline));
  if (!node || typeof node !== 'object') return node;
  const n = node as Record<string, unknown>;
  const m = typeof n.$ref === 'string' ? REF.exec(n.$ref) : null;
  if (m && inline.has(m[1]!)) {
    const { $ref: _ref, ...siblings } = n;
    const def = defs[m[1]!]!;
    const merged = Object.keys(siblings).every((k) => ANNOTATIONS.has(k)) ? { ...def, ...siblings } : { ...siblings, allOf: [def] };
    return replaceRefs(merged, defs, inline);
  }
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, replaceRefs(v, defs, inline)]));
}

/** Throws when two schemas give one `$defs` name different shapes (two zod schemas named alike by `shape`). */
export function assertOneShapePerName(schemas: Iterable<{ name: string; schema: JsonSchema }>): void {
  const seen = new Map<string, { text: string; tool: string }>();
  for (const { name, schema } of schemas) {
    for (const [def, body] of Object.entries((schema.$defs as Record<string, JsonSchema> | undefined) ?? {})) {
      const text = JSON.stringify(body);
      const first = seen.get(def);
      if (first && first.text !== text)
        throw new Error(`registry: $defs/${def} has two shapes (${first.tool}, ${name}); name each shape once`);
      seen.set(def, first ?? { text, tool: name });
    }
  }
}

/** Keys whose value maps names to schemas (a property named "type" is not a keyword). */
function isMap(k: string): boolean {
  return k === 'properties' || k === '$defs' || k === 'patternProperties';
}

function mapValues(v: unknown, f: (x: unknown) => unknown): unknown {
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, f(x)]));
}

/** An output schema without the envelope's properties (see `resultEnvelope` in text.ts). */
export function withoutEnvelope(output: JsonSchema, envelope: JsonSchema): JsonSchema {
  const drop = new Set(Object.keys((envelope.properties as object | undefined) ?? {}));
  const props = Object.entries((output.properties as Record<string, unknown> | undefined) ?? {});
  if (!drop.size || props.every(([k]) => !drop.has(k))) return output;
  const required = ((output.required as string[] | undefined) ?? []).filter((k) => !drop.has(k));
  const { required: _r, ...rest } = output;
  return {
    ...rest,
    properties: Object.fromEntries(props.filter(([k]) => !drop.has(k))),
    ...(required.length ? { required } : {}),
  };
}

/** A tool's output schema with the envelope's properties put back: the whole `data` object (typed client, OpenAPI). */
export function withEnvelope(output: JsonSchema, envelope: JsonSchema): JsonSchema {
  const { required: _r, ...rest } = output;
  return {
    ...rest,
    properties: { ...(output.properties as object), ...(envelope.properties as object) },
    required: [...((output.required as string[] | undefined) ?? []), ...((envelope.required as string[] | undefined) ?? [])],
    ...(envelope.$defs || output.$defs ? { $defs: { ...(output.$defs as object), ...(envelope.$defs as object) } } : {}),
  };
}
