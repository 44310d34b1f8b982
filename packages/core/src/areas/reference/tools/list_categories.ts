import { z } from 'zod';
import { readTool } from '../../../kernel/trpc.ts';
import { READ } from '../../../kernel/meta.ts';
import { output } from '../../../kernel/text.ts';
import { CATEGORIES } from '../categories.ts';

export const list_categories = readTool
  .meta({
    area: 'reference',
    title: 'List expense categories',
    description:
      'The fixed list of expense categories, a two-level tree: parents (parent_id null, e.g. "food") and children ("food/groceries"). ' +
      'add_expense and update_expense take category_id (default "general"); list_expenses filters by it (a parent includes its children).',
    annotations: READ,
    errors: {},
    static: true,
  })
  .input(z.strictObject({}))
  .output(
    output({
      categories: z.array(
        z.object({ category_id: z.string(), name: z.string(), parent_id: z.string().nullable().describe('null for a parent.') }),
      ),
    }),
  )
  .query(() => ({
    categories: CATEGORIES.map((c) => ({ ...c })),
    suggested_next: ['add_expense: record an expense with a category_id'],
  }));
