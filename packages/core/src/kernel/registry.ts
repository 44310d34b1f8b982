/**
 * The registry: the one place that turns the tRPC router into everything the adapters serve.
 *
 * - `catalogue`, `tools`, `version`, `envelope` (catalogue.ts): per tool, its JSON Schema input and
 *   output, metadata, scope and description with its "Errors:" sentence; the ETag of GET /v1/tools.
 * - `callTool(name, args, ctx)` (call.ts): runs a tool, returns `data` (with `inbox` when the caller has
 *   unread items, and `replayed: true` when the result is the replay of an earlier call with the same key).
 * - `validateArgs(name, args)`: the sandbox check against the live schema (explain.ts: every issue, explained).
 * - `unknownTool(name)`: the one NOT_FOUND for a tool name, naming the closest tools.
 *
 * Both `callTool` and `validateArgs` first refuse arguments no tool can take (NUL, lone
 * surrogates, excessive nesting: safe-input.ts), so that rule holds for every tool by construction.
 */
import type { AnyTRPCRouter } from '@trpc/server';
import type { CallInfo } from './context.ts';
import type { ToolExample } from './examples.ts';
import { ToolError, type ValidationIssue } from './errors.ts';
import { inputIssues } from './safe-input.ts';
import { closestNames, didYouMean } from './suggest.ts';
import { RESULT_ENVELOPE_TEXT } from './text.ts';
import type { JsonSchema } from './json-schema.ts';
import { describeTools, type ToolDescriptor } from './catalogue.ts';
import { callTool, type CallRequest, type Procedure } from './call.ts';
import { parseIssues, explainIssues } from './explain.ts';

export type { JsonSchema } from './json-schema.ts';
export { portable, withEnvelope, expandRequired } from './json-schema.ts';
export { COMMON_ERRORS, errorsSentence, type ToolDescriptor } from './catalogue.ts';
export type { CallRequest } from './call.ts';

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

/** Builds the registry from the router; throws at start-up on a malformed tool. */
export function buildRegistry(appRouter: AnyTRPCRouter): Registry {
  const { tools, catalogue, version, envelope, inputSchemas, examples } = describeTools(appRouter);
  const procedures = (appRouter._def as unknown as { procedures: Record<string, Procedure> }).procedures;
  const names = [...tools.keys()];

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
  // Answers of static tools (meta.static: the same for every caller and call), per set of scopes (suggested_next is
  // filtered by them): computed by the first call through the procedure, then served from memory.
  const table = { tools, procedures, unknownTool, staticAnswers: new Map<string, Record<string, unknown>>() };

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
    callTool: (name, args, req) => callTool(table, name, args, req),
  };
}
