export * from './kernel/errors.ts';
export { KITTY_VERSION } from './version.ts';
export * from './kernel/context.ts';
export * from './kernel/meta.ts';
export * from './kernel/registry.ts';
export { inputIssues, MAX_ARGUMENT_DEPTH } from './kernel/safe-input.ts';
export { appRouter, type AppRouter } from './catalogue.ts';
export {
  generateApiKey,
  digestApiKey,
  digestApiKeyHex,
  isWellFormedApiKey,
  API_KEY_PREFIX,
  ROTATION_GRACE_SECONDS,
} from './access/api-keys.ts';
export { inviteCodeKey } from './areas/invites/codes.ts';
export { findInviteByCode, toInvite, effectiveStatus } from './areas/invites/invites.ts';
export { CURRENCIES, currencyInfo, formatMinor } from './kernel/money.ts';
export { requestHash } from './kernel/trpc.ts';
export { runRecurrences, type RecurrenceRunResult } from './areas/expenses/recurrence.ts';
export { verifyLedger, type LedgerReport } from './areas/ledger/verify.ts';
export { allocate, convertAmount, pairEdges } from './areas/ledger/split.ts';
export { planSettlements, EXACT_LIMIT } from './areas/balances/settle.ts';
export { inboxSummaryFor } from './kernel/inbox-summary.ts';
export { setLocalWakeRoute, type LocalWakeRoute } from './kernel/wakes.ts';
export { groupReadWeight } from './access/group-reads.ts';
export { GET_ME_SQL } from './areas/account/me.ts';
export * from './access/person-sessions.ts';
export * from './people/index.ts';
export { createAgentWithKey, validateNewAgent } from './access/agents.ts';
export { IDEMPOTENCY_KEY_LENGTH } from './kernel/text.ts';
export { EVENT_TYPES, pruneEvents, type EventType } from './kernel/events.ts';
export { disableWebhook } from './areas/webhooks/webhooks.ts';
export { safeLookup } from './areas/webhooks/address.ts';
export {
  readEvents,
  waitForEvents,
  latestEventId,
  latestEvents,
  watchEvents,
  feedOwner,
  decodeEventId,
  encodeEventId,
  type FeedEvent,
} from './areas/events/feed.ts';
export { openReceipt, receiptConfig, DEFAULT_RECEIPT_MAX_BYTES } from './areas/expenses/receipts.ts';
export { postgresReceiptStore } from './areas/expenses/receipt-store.ts';
