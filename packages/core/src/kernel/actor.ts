/**
 * The authenticated agent a rule acts for. Rules (access/, areas/<area>/*.ts) take (db, actor, input):
 * a tool passes `ctx.auth` (an AuthInfo is an Actor).
 */
export interface Actor {
  agentId: string;
  handle: string;
  displayName: string;
}
