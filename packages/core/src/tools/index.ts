/**
 * The tool catalogue: one router whose keys are the tool names. Each area's index re-exports
 * its tools (one file per tool); adding a tool here is all it takes for REST, MCP, discovery,
 * sandbox, OpenAPI and the typed client to pick it up.
 */
import { router } from '../trpc.ts';
import * as account from './account/index.ts';
import * as groups from './groups/index.ts';
import * as invites from './invites/index.ts';
import * as contacts from './contacts/index.ts';
import * as messages from './messages/index.ts';
import * as inbox from './inbox/index.ts';
import * as expenses from './expenses/index.ts';
import * as payments from './payments/index.ts';
import * as balances from './balances/index.ts';
import * as records from './records/index.ts';
import * as reference from './reference/index.ts';
import * as events from './events/index.ts';
import * as stats from './stats/index.ts';
import * as receipts from './receipts/index.ts';
import * as webhooks from './webhooks/index.ts';

export const appRouter = router({
  ...account,
  ...groups,
  ...invites,
  ...contacts,
  ...messages,
  ...inbox,
  ...expenses,
  ...payments,
  ...balances,
  ...records,
  ...reference,
  ...events,
  ...stats,
  ...receipts,
  ...webhooks,
});

export type AppRouter = typeof appRouter;
