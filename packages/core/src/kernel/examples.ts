/**
 * Tool examples: a call and its answer, for docs (docs/tools.md) and OpenAPI; never in MCP tools/list (the catalogue
 * has a size budget). They are kept out of the tool files: each area's examples.ts holds its tools' examples keyed by
 * tool name (plain data, importing only this file), and catalogue.ts merges them into the tools' meta with
 * withExamples, where the registry reads them as `meta.examples`. test/kernel/examples.test.ts checks each one
 * against its tool's own input and output schemas.
 */
import type { AnyTRPCRouter } from '@trpc/server';

/** One call of a tool and its answer. */
export interface ToolExample {
  /** What the call does, one line (the OpenAPI example's summary, the heading in the docs). */
  summary: string;
  /** The arguments as sent (REST body, MCP arguments). */
  arguments: Record<string, unknown>;
  /** The answer's `data` (REST) / structuredContent (MCP). */
  result: Record<string, unknown>;
}

/** An area's examples: tool name → its examples. */
export type ToolExamples = Record<string, ToolExample[]>;

/**
 * Writes each table's examples into its tools' meta (`meta.examples`, appended).
 * @returns the same router; throws on an example for a tool the router does not have.
 */
export function withExamples<R extends AnyTRPCRouter>(router: R, ...tables: ToolExamples[]): R {
  const procedures = (router._def as unknown as { procedures: Record<string, { _def: { meta?: { examples?: ToolExample[] } } }> })
    .procedures;
  for (const table of tables) {
    for (const [name, examples] of Object.entries(table)) {
      const def = procedures[name]?._def;
      if (!def?.meta) throw new Error(`examples: there is no tool "${name}"`);
      def.meta = { ...def.meta, examples: [...(def.meta.examples ?? []), ...examples] };
    }
  }
  return router;
}
