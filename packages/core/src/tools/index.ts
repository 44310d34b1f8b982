/**
 * The tool catalogue: one router whose keys are the tool names. Each area's index re-exports
 * its tools (one file per tool); adding a tool here is all it takes for REST, MCP, discovery,
 * sandbox, OpenAPI and the typed client to pick it up.
 */
import { router } from '../trpc.ts';
import * as account from './account/index.ts';
import * as groups from './groups/index.ts';
import * as invites from './invites/index.ts';

export const appRouter = router({
  ...account,
  ...groups,
  ...invites,
});

export type AppRouter = typeof appRouter;
