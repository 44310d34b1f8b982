/**
 * Explaining refused arguments: all the issues of a tool's input schemas (the sandbox and the call
 * parse alike), unknown keys naming the closest allowed key, an amount that is not an integer shown
 * in the group's currency.
 */
import type { z } from 'zod';
import type { ToolContext } from './context.ts';
import { ToolError, issuesFromZod, type ValidationIssue } from './errors.ts';
import { amountExample } from './money.ts';
import { closestNames, didYouMean } from './suggest.ts';
import { AMOUNT_RULE } from './text.ts';
import type { JsonSchema } from './json-schema.ts';
import type { ToolDescriptor } from './catalogue.ts';

/**
 * Parses args with each of a tool's input schemas, as the tool call does: the base's schemas
 * (`idempotency_key`, `dry_run`) see the arguments, the tool's own strict schema sees them without
 * the base's keys. All issues.
 */
export function parseIssues(parsers: z.ZodType[], baseKeys: readonly string[], args: unknown): ValidationIssue[] {
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
export function explainIssues(issues: ValidationIssue[], schema: JsonSchema): ValidationIssue[] {
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
export async function helpfulError(err: ToolError, tool: ToolDescriptor, args: unknown, ctx: ToolContext): Promise<ToolError> {
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
