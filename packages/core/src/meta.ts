/**
 * Tool metadata: everything about a tool except its schemas and handler.
 * The tool's name is its key in the router (one declaration, see tools/index.ts); whether it
 * reads or writes is its base (readTool → query, writeTool → mutation; see trpc.ts).
 */
import type { ErrorCode } from './errors.ts';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolMeta {
  title: string;
  /** What it does, shapes, units, errors and the source of each rule. */
  description: string;
  /** 'none' only for register_agent (interface-spec "Authentication" 6). Default 'required'. */
  auth?: 'required' | 'none';
  /**
   * How idempotency keys work for this write tool (DESIGN.md §4):
   * 'replay' (default) stores the response with the effect and replays it;
   * 'never_replay' stores the key but refuses a second call (rotate_api_key: a secret is never stored);
   * 'none' takes no key (register_agent).
   */
  idempotency?: 'replay' | 'never_replay' | 'none';
  annotations: ToolAnnotations;
  /** Error codes this tool can raise beyond the ones every tool can (VALIDATION_ERROR, UNAUTHENTICATED, FORBIDDEN, RATE_LIMITED, INTERNAL) and the idempotency ones the registry adds to write tools. */
  errors: ErrorCode[];
  /** Short group name for docs ("account", "groups", …). */
  area: string;
}

/** Annotation presets. */
export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const DESTRUCTIVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
