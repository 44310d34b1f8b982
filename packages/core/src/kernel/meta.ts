/**
 * Tool metadata: everything about a tool except its schemas and handler.
 * The tool's name is its key in the router (one declaration, see catalogue.ts); whether it
 * reads or writes is its base (readTool → query, writeTool → mutation; see trpc.ts).
 */
import type { ErrorCode } from './errors.ts';
import type { ToolExample } from './examples.ts';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolMeta {
  title: string;
  /**
   * What it does, shapes and units, for an agent reading it cold: no references to internal documents.
   * Without an "Errors:" sentence: the registry appends one generated from `errors`.
   */
  description: string;
  /** 'none' only on the public write base (`publicWriteTool`, register_agent): set by the base, not by tools. Default 'required'. */
  auth?: 'required' | 'none';
  /**
   * How idempotency keys work for this write tool:
   * 'replay' (default) stores the response with the effect and replays it;
   * 'never_replay' stores the key but refuses a second call (rotate_api_key: a secret is never stored);
   * 'none' takes no key (set by `publicWriteTool`).
   */
  idempotency?: 'replay' | 'never_replay' | 'none';
  annotations: ToolAnnotations;
  /**
   * The errors this tool raises for its own reasons, code → when (e.g. `NOT_FOUND: 'no such group'`).
   * The description's "Errors:" sentence is generated from this map. Codes every tool can raise
   * (COMMON_ERRORS) and the idempotency ones of write tools are added by the registry; list a common
   * code here only to say a tool-specific reason (e.g. FORBIDDEN: 'not a member').
   */
  errors: ToolErrors;
  /** Short group name for docs ("account", "groups", …). */
  area: string;
  /**
   * Calls and their answers for docs and OpenAPI (never in MCP tools/list: the catalogue has a size budget).
   * Kept out of the tool files: each area's examples.ts, keyed by tool name, merged in by catalogue.ts (withExamples).
   */
  examples?: ToolExample[];
}

/** Error code → the reason this tool raises it (a phrase, no final full stop). */
export type ToolErrors = Partial<Record<ErrorCode, string>>;

export type Scope = 'svc:read' | 'svc:write';

/**
 * The scope rule, in one place: read tools (tRPC queries) need svc:read, write tools (mutations)
 * svc:write. Used by the auth middleware (trpc.ts) and the catalogue (registry.ts).
 */
export function requiredScope(kind: 'read' | 'write'): Scope {
  return kind === 'read' ? 'svc:read' : 'svc:write';
}

/** Annotation presets. */
export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
