/**
 * The tool catalogue: one router whose keys are the tool names. Each area's index re-exports
 * its tools (one file per tool); adding a tool here is all it takes for REST, MCP, discovery,
 * sandbox, OpenAPI and the typed client to pick it up. Examples (docs and OpenAPI only) live beside the tools, in
 * each area's examples.ts, and are merged into the tools' meta here.
 */
import { router } from './kernel/trpc.ts';
import { withExamples } from './kernel/examples.ts';
import * as account from './areas/account/tools/index.ts';
import * as groups from './areas/groups/tools/index.ts';
import * as invites from './areas/invites/tools/index.ts';
import * as contacts from './areas/contacts/tools/index.ts';
import * as messages from './areas/messages/tools/index.ts';
import * as inbox from './areas/inbox/tools/index.ts';
import * as expenses from './areas/expenses/tools/index.ts';
import * as payments from './areas/payments/tools/index.ts';
import * as balances from './areas/balances/tools/index.ts';
import * as records from './areas/records/tools/index.ts';
import * as reference from './areas/reference/tools/index.ts';
import * as events from './areas/events/tools/index.ts';
import * as stats from './areas/stats/tools/index.ts';
import * as receipts from './areas/receipts/tools/index.ts';
import * as webhooks from './areas/webhooks/tools/index.ts';
import { examples as accountExamples } from './areas/account/examples.ts';
import { examples as groupsExamples } from './areas/groups/examples.ts';
import { examples as invitesExamples } from './areas/invites/examples.ts';
import { examples as inboxExamples } from './areas/inbox/examples.ts';
import { examples as expensesExamples } from './areas/expenses/examples.ts';
import { examples as paymentsExamples } from './areas/payments/examples.ts';
import { examples as balancesExamples } from './areas/balances/examples.ts';
import { examples as eventsExamples } from './areas/events/examples.ts';
import { examples as webhooksExamples } from './areas/webhooks/examples.ts';

const tools = router({
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

export const appRouter = withExamples(
  tools,
  accountExamples,
  groupsExamples,
  invitesExamples,
  inboxExamples,
  expensesExamples,
  paymentsExamples,
  balancesExamples,
  eventsExamples,
  webhooksExamples,
);

export type AppRouter = typeof appRouter;
