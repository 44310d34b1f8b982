/**
 * Previews (`dry_run: true`) of the write tools built on `previewWriteTool` and
 * `previewBatchedWriteTool` (trpc.ts): the argument and output fields, declared once, and the
 * balance changes a preview reports.
 *
 * How a preview runs: a batched write's handler decides and stages its batch exactly as the real
 * call, which is then not sent (every rule is decided in TypeScript; kitty_apply_batch only writes
 * and re-checks the state read, so the refusals are the same). Any other write runs in its
 * transaction exactly as the real call — locks, checks, rows, activity, inbox — and the
 * transaction is rolled back. Neither stores the idempotency record.
 */
import { z } from 'zod';
import type { BalanceChange } from './balance-changes.ts';

/** The one declaration of the `dry_run` argument. */
export const dryRunArg = z
  .boolean()
  .optional()
  .describe('true: preview. The real answer plus balance_changes; writes nothing, the key stays unused.');

const balanceChange = z.object({
  handle: z.string(),
  before_minor: z.number().int(),
  after_minor: z.number().int(),
});

/** Output fields of a previewable tool. */
export const previewOutput = {
  dry_run: z.boolean().optional().describe('true: a preview, nothing written.'),
  balance_changes: z.array(balanceChange).optional().describe('Preview: balances that would change, minor units.'),
};

/** Thrown at the end of a previewed transaction to roll it back; carries the answer. */
export class PreviewRollback extends Error {
  readonly answer: unknown;
  constructor(answer: unknown) {
    super('preview: rolled back');
    this.answer = answer;
  }
}

/** Whether the parsed arguments ask for a preview (`dry_run: true`, previewable tools only). */
export function isDryRun(input: unknown): boolean {
  return (input as { dry_run?: unknown } | undefined)?.dry_run === true;
}

/** A tool's answer as a preview: the same data plus dry_run: true and the balance changes. */
export function previewOf<R extends { ok: boolean }>(result: R, changes: BalanceChange[]): R {
  if (!result.ok) return result;
  const data = (result as unknown as { data: Record<string, unknown> }).data;
  return { ...result, data: { ...data, dry_run: true, balance_changes: changes } };
}
