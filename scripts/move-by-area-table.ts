/**
 * Where each file goes in the move by area (scripts/move-by-area.ts). Paths are relative to
 * packages/core/src, packages/core/test and apps/server/test. A row wins over the rules; a file
 * that neither a row nor a rule places stops the script: add a row.
 */
import { createRequire } from 'node:module';

interface Rule {
  from: RegExp;
  /** The new relative path, or null: the file stays where it is. */
  to: (m: RegExpExecArray) => string | null;
}

/** Catalogue areas, in their import order (scripts/area-order.cjs, also read by .dependency-cruiser.cjs). */
const AREA_NAMES: readonly string[] = createRequire(import.meta.url)('./area-order.cjs');

export const SRC_MAP: Record<string, string> = {
  'index.ts': 'index.ts',
  'version.ts': 'version.ts',
  'tools/index.ts': 'catalogue.ts',
  // kernel: what every tool call runs through; imports nothing above it
  'trpc.ts': 'kernel/trpc.ts',
  'meta.ts': 'kernel/meta.ts',
  'context.ts': 'kernel/context.ts',
  'errors.ts': 'kernel/errors.ts',
  'registry.ts': 'kernel/registry.ts',
  'safe-input.ts': 'kernel/safe-input.ts',
  'suggest.ts': 'kernel/suggest.ts',
  'text.ts': 'kernel/text.ts',
  'domain/write-batch.ts': 'kernel/write-batch.ts',
  'domain/activity.ts': 'kernel/activity.ts',
  'domain/inbox.ts': 'kernel/notify.ts',
  'domain/inbox-summary.ts': 'kernel/inbox-summary.ts',
  'domain/cursor.ts': 'kernel/cursor.ts',
  'domain/money.ts': 'kernel/money.ts',
  'domain/events.ts': 'kernel/events.ts',
  'domain/ledger/balance-changes.ts': 'kernel/balance-changes.ts',
  'preview.ts': 'kernel/preview.ts',
  'json-schema.ts': 'kernel/json-schema.ts',
  // access: who is this, and may they touch it
  'domain/agents.ts': 'access/agents.ts',
  'domain/api-keys.ts': 'access/api-keys.ts',
  'domain/groups.ts': 'access/groups.ts',
  'domain/members.ts': 'access/members.ts',
  'domain/network.ts': 'access/reachability.ts',
  'people/sessions.ts': 'access/person-sessions.ts',
  // areas
  'domain/me.ts': 'areas/account/me.ts',
  'domain/api-key-admin.ts': 'areas/account/api-key-admin.ts',
  'domain/payout.ts': 'areas/account/payout.ts',
  'domain/ledger/categories.ts': 'areas/reference/categories.ts',
  'domain/ledger/itemized.ts': 'areas/expenses/itemized.ts',
  'domain/ledger/stats.ts': 'areas/stats/stats.ts',
  // receipts belong to expenses (get_expense shows them; they check the expense's edit rights)
  'domain/receipts/receipt-wire.ts': 'areas/expenses/receipt-wire.ts',
  'domain/receipts/receipts.ts': 'areas/expenses/receipts.ts',
  'domain/receipts/store.ts': 'areas/expenses/receipt-store.ts',
  // the inbox's call summaries are written by every batched write (kernel)
  'domain/inbox-calls.ts': 'kernel/inbox-calls.ts',
  'domain/event-feed.ts': 'areas/events/feed.ts',
  'domain/webhooks.ts': 'areas/webhooks/webhooks.ts',
  'domain/webhook-address.ts': 'areas/webhooks/address.ts',
  'domain/contacts.ts': 'areas/contacts/contacts.ts',
  'domain/contact-add.ts': 'areas/contacts/add.ts',
  'domain/direct-ledgers.ts': 'areas/groups/direct-ledgers.ts',
  'domain/group-changes.ts': 'areas/groups/update.ts',
  'domain/group-create.ts': 'areas/groups/create.ts',
  'domain/member-removal.ts': 'areas/groups/remove-member.ts',
  'domain/member-role.ts': 'areas/groups/set-role.ts',
  'domain/invites.ts': 'areas/invites/invites.ts',
  'domain/invite-codes.ts': 'areas/invites/codes.ts',
  'domain/invite-create.ts': 'areas/invites/create.ts',
  'domain/invite-decline.ts': 'areas/invites/decline.ts',
  'domain/invite-view.ts': 'areas/invites/view.ts',
  'domain/conversations.ts': 'areas/messages/conversations.ts',
  'domain/messages.ts': 'areas/messages/messages.ts',
  'domain/send-message.ts': 'areas/messages/send.ts',
  'domain/inbox-items.ts': 'areas/inbox/items.ts',
  'domain/inbox-read.ts': 'areas/inbox/mark-read.ts',
  'domain/activity-log.ts': 'areas/records/activity-log.ts',
  'domain/ledger/export.ts': 'areas/records/export.ts',
  'domain/ledger/import.ts': 'areas/records/import-parse.ts',
  'domain/ledger/import-run.ts': 'areas/records/import.ts',
  'domain/ledger/access.ts': 'areas/expenses/edit-rights.ts',
  'domain/ledger/recurrence.ts': 'areas/expenses/recurrence.ts',
  'domain/ledger/payments.ts': 'areas/payments/payments.ts',
  'domain/ledger/payment-record.ts': 'areas/payments/record.ts',
  'domain/ledger/transition.ts': 'areas/payments/transition.ts',
  'domain/ledger/settle.ts': 'areas/balances/settle.ts',
  'domain/ledger/settle-plan.ts': 'areas/balances/settle-plan.ts',
  'domain/ledger/summary.ts': 'areas/balances/summary.ts',
  'domain/ledger/balances.ts': 'areas/balances/balances.ts', // uses expenses' agentsById: above expenses
  'domain/ledger/cycles.ts': 'areas/ledger/cycles.ts',
  'domain/ledger/effects.ts': 'areas/ledger/effects.ts',
  'domain/ledger/split.ts': 'areas/ledger/split.ts',
  'domain/ledger/verify.ts': 'areas/ledger/verify.ts',
  'domain/ledger/settle-vectors.ts': 'testing/settle-vectors.ts',
  'testing.ts': 'testing/index.ts',
  // people: the account page
  'account/index.ts': 'people/index.ts',
  'account/router.ts': 'people/account-router.ts',
  'account/trpc.ts': 'people/account-trpc.ts',
};

const byPrefix: Array<[RegExp, string]> = [
  [/^invite-(.+)$/, 'invites'],
  [/^(?:group|member)-(.+)$/, 'groups'],
  [/^inbox-(.+)$/, 'inbox'],
  [/^contact-(.+)$/, 'contacts'],
  [/^(?:message|conversation)-(.+)$/, 'messages'],
  [/^expense-(.+)$/, 'expenses'],
  [/^payment-(.+)$/, 'payments'],
  [/^(settle-.+)$/, 'balances'],
  [/^(import-.+|export-.+)$/, 'records'],
];

export const SRC_RULES: Rule[] = [
  // A tool: src/tools/<area>/<tool_name>.ts (and the area's index.ts) → areas/<area>/tools/.
  { from: /^tools\/([a-z_-]+)\/([^/]+)$/, to: (m) => `areas/${m[1]}/tools/${m[2]}` },
  // A domain file named after its area: invite-x.ts → areas/invites/x.ts, expense-x.ts → areas/expenses/x.ts …
  {
    from: /^domain\/(?:ledger\/)?([^/]+)$/,
    to: (m) => {
      for (const [re, area] of byPrefix) {
        const p = re.exec(m[1]!);
        if (p) return `areas/${area}/${p[1]}`;
      }
      return `unmapped:${m[1]}`;
    },
  },
  { from: /^account\/([^/]+)$/, to: (m) => `people/${m[1]}` },
  // Already in the new layout (or added there by hand): stays.
  { from: /^(kernel|access|areas|people|testing)\//, to: () => null },
  { from: /^catalogue\.ts$/, to: () => null },
];

export const CORE_TEST_MAP: Record<string, string> = {
  'harness.ts': 'harness.ts',
  'ledger-helpers.ts': 'ledger-helpers.ts',
  'pool-proxy.ts': 'pool-proxy.ts',
  'fixtures/spliit-export.csv': 'records/fixtures/spliit-export.csv',
  'fixtures/splitwise-export.csv': 'records/fixtures/splitwise-export.csv',
  'account-router.test.ts': 'people/account-router.test.ts',
  'agent-tasks.test.ts': 'scenarios/agent-tasks.test.ts',
  'authz.test.ts': 'access/consent-and-removal.test.ts',
  'catalogue.test.ts': 'kernel/catalogue.test.ts',
  'commit-outcome.test.ts': 'kernel/commit-outcome.test.ts',
  'descriptions.test.ts': 'kernel/descriptions.test.ts',
  'foundation.test.ts': 'scenarios/tool-tables.test.ts',
  'hostile-strings.test.ts': 'kernel/hostile-strings.test.ts',
  'import-real.test.ts': 'records/import-real.test.ts',
  'inbox-summary.test.ts': 'kernel/inbox-summary.test.ts',
  'ledger-concurrency.test.ts': 'ledger/concurrency.test.ts',
  'ledger-recurrence.test.ts': 'expenses/recurrence.test.ts',
  'ledger-trip.test.ts': 'scenarios/trip.test.ts',
  'ledger.test.ts': 'ledger/ledger.test.ts',
  'network-scenario.test.ts': 'scenarios/network.test.ts',
  'network.test.ts': 'scenarios/network-tools.test.ts',
  'overpayment.test.ts': 'payments/overpayment.test.ts',
  'pair-debts.test.ts': 'ledger/pair-debts.test.ts',
  'registry.test.ts': 'kernel/registry.test.ts',
  'settle.test.ts': 'balances/settle.test.ts',
  'split.test.ts': 'ledger/split.test.ts',
  'write-batch.test.ts': 'kernel/write-batch.test.ts',
  'api-key-tools.test.ts': 'account/api-key-tools.test.ts',
  'database-errors.test.ts': 'kernel/database-errors.test.ts',
  'error-hints.test.ts': 'kernel/error-hints.test.ts',
  'json-schema.test.ts': 'kernel/json-schema.test.ts',
  'payout.test.ts': 'account/payout.test.ts',
  'preview.test.ts': 'kernel/preview.test.ts',
  'split-props.test.ts': 'ledger/split-props.test.ts',
};

const AREA_OR_ROOM = [...AREA_NAMES, 'kernel', 'access', 'people', 'scenarios'];
/** A test named after an area (groups-x.test.ts, groups.test.ts) goes to test/<area>/; singular names too (group-x → groups). */
function testRule(name: string): string | null {
  for (const area of AREA_OR_ROOM) {
    const stem = area.replace(/s$/, '');
    const m = new RegExp(`^(?:${area}|${stem})(?:-(.+))?\\.test\\.ts$`).exec(name);
    if (m) return `${area}/${m[1] ? `${m[1]}.test.ts` : `${area}.test.ts`}`;
  }
  return null;
}

export const CORE_TEST_RULES: Rule[] = [
  { from: /^[^/]+\/.+$/, to: () => null }, // already in a folder
  { from: /^([^/]+\.test\.ts)$/, to: (m) => testRule(m[1]!) ?? `unmapped:${m[1]}` },
  { from: /^[^/]+\.ts$/, to: () => null }, // helpers stay at the root of test/
];

export const SERVER_TEST_MAP: Record<string, string> = {
  'abuse-limits.test.ts': 'http/abuse-limits.test.ts',
  'agent-errors.test.ts': 'http/agent-errors.test.ts',
  'hostile-input.test.ts': 'http/hostile-input.test.ts',
  'mcp-external.test.ts': 'http/mcp-external.test.ts',
  'mcp.test.ts': 'http/mcp.test.ts',
  'openapi.test.ts': 'http/openapi.test.ts',
  'rate-limit.test.ts': 'http/rate-limit.test.ts',
  'rest.test.ts': 'http/rest.test.ts',
  'robustness.test.ts': 'http/robustness.test.ts',
  'secrets-and-headers.test.ts': 'http/secrets-and-headers.test.ts',
  'timeouts.test.ts': 'http/timeouts.test.ts',
  'transport.test.ts': 'http/transport.test.ts',
  'authz-matrix.test.ts': 'auth/authz-matrix.test.ts',
  'credential-notify.test.ts': 'auth/credential-notify.test.ts',
  'oauth-browser.test.ts': 'oauth/browser.test.ts',
  'oauth-clients.test.ts': 'oauth/clients.test.ts',
  'oauth.test.ts': 'oauth/oauth.test.ts',
  'oidc-login.test.ts': 'oauth/oidc-login.test.ts',
  'account-e2e.test.ts': 'people/account-e2e.test.ts',
  'account.test.ts': 'people/account.test.ts',
  'people-web.test.ts': 'people/web.test.ts',
  'passkey-options.test.ts': 'people/passkey-options.test.ts',
  'config.test.ts': 'runtime/config.test.ts',
  'crash.test.ts': 'runtime/crash.test.ts',
  'database-faults.test.ts': 'runtime/database-faults.test.ts',
  'deadlocks.test.ts': 'runtime/deadlocks.test.ts',
  'inbox-cache.test.ts': 'runtime/inbox-cache.test.ts',
  'lifecycle.test.ts': 'runtime/lifecycle.test.ts',
  'pg-listener.test.ts': 'runtime/pg-listener.test.ts',
  'two-instances.test.ts': 'runtime/two-instances.test.ts',
  'client-package.test.ts': 'scenarios/client-package.test.ts',
  'e2e-scenarios.test.ts': 'scenarios/e2e.test.ts',
  'readme.test.ts': 'scenarios/readme.test.ts',
  'mcp-2026.test.ts': 'http/mcp-2026.test.ts',
  'api-keys.test.ts': 'auth/api-keys.test.ts',
  'backup-restore.test.ts': 'runtime/backup-restore.test.ts',
  'catalogue-size.test.ts': 'http/catalogue-size.test.ts',
  'compression.test.ts': 'http/compression.test.ts',
  'default-address.test.ts': 'runtime/default-address.test.ts',
  'events-stream.test.ts': 'http/events-stream.test.ts',
  'first-run-browser.test.ts': 'people/first-run-browser.test.ts',
  'import-kitty.test.ts': 'scenarios/import-kitty.test.ts',
  'inbox-actions.test.ts': 'http/inbox-actions.test.ts',
  'postmaster-load.test.ts': 'runtime/postmaster-load.test.ts',
  'preview-http.test.ts': 'http/preview.test.ts',
  'receipts-mcp.test.ts': 'http/receipts-mcp.test.ts',
  'receipts.test.ts': 'http/receipts.test.ts',
  'shared-address.test.ts': 'runtime/shared-address.test.ts',
  'webhooks-crash.test.ts': 'runtime/webhooks-crash.test.ts',
  'webhooks-two-instances.test.ts': 'runtime/webhooks-two-instances.test.ts',
  'webhooks.test.ts': 'runtime/webhooks.test.ts',
};

const SERVER_ROOMS: Array<[RegExp, string]> = [
  [/^(?:oauth|oidc)-(.+\.test\.ts)$/, 'oauth'],
  [/^(?:people|account)-(.+\.test\.ts)$/, 'people'],
  [/^(?:mcp|rest|http)-(.+\.test\.ts)$/, 'http'],
  [/^(?:auth)-(.+\.test\.ts)$/, 'auth'],
];

export const SERVER_TEST_RULES: Rule[] = [
  { from: /^[^/]+\/.+$/, to: () => null },
  {
    from: /^([^/]+\.test\.ts)$/,
    to: (m) => {
      for (const [re, room] of SERVER_ROOMS) {
        const r = re.exec(m[1]!);
        if (r) return `${room}/${r[1]}`;
      }
      return `unmapped:${m[1]}`;
    },
  },
  { from: /^[^/]+\.ts$/, to: () => null }, // helpers (server-harness, oauth-harness, browser, …) stay
];

/** The account page's components (App.tsx, pages/AgentKeys.tsx …) take kebab-case names like every other file. */
export const ACCOUNT_RULES: Rule[] = [
  {
    from: /^(.*?)([^/]+)$/,
    to: (m) => {
      const kebab = m[2]!
        .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
        .replace(/^[A-Z]/, (c) => c.toLowerCase())
        .toLowerCase();
      return kebab === m[2] ? null : `${m[1]}${kebab}`;
    },
  },
];

/**
 * apps/server/src in rooms: http/ (Fastify, the envelope, limits, the public routes), auth/ (bearer credentials and
 * the 401 challenge), oauth/ (the authorization server and consent), people/ (sign-in and the account page, its own
 * plugin), runtime/ (configuration, database, notifications, background work). index.ts (package.json `exports`) and
 * main.ts (run by ./kitty) stay at the root.
 */
export const SERVER_SRC_MAP: Record<string, string> = {
  'index.ts': 'index.ts',
  'main.ts': 'main.ts',
  // http: the Fastify app and what every request passes through
  'http.ts': 'http/app.ts',
  'wire-errors.ts': 'http/wire-errors.ts',
  'compression.ts': 'http/compression.ts',
  'cors.ts': 'http/cors.ts',
  'security-headers.ts': 'http/security-headers.ts',
  'page-host.ts': 'http/page-host.ts',
  'favicon.ts': 'http/favicon.ts',
  'metadata.ts': 'http/metadata.ts',
  'event-stream.ts': 'http/event-stream.ts',
  'rate-limit.ts': 'http/rate-limit.ts',
  'abuse-limits.ts': 'http/abuse-limits.ts',
  // auth: who presents which bearer credential, and the challenge when none works
  'auth.ts': 'auth/api-keys.ts',
  'known-credentials.ts': 'auth/known-credentials.ts',
  'credential-notify.ts': 'auth/credential-notify.ts',
  'www-authenticate.ts': 'auth/www-authenticate.ts',
  'oauth/authenticator.ts': 'auth/bearer.ts',
  // people: the account page (its router and built page) beside sign-in
  'account-routes.ts': 'people/account-routes.ts',
  // runtime: configuration, the database, notifications, background work
  'config.ts': 'runtime/config.ts',
  'startup.ts': 'runtime/startup.ts',
  'database.ts': 'runtime/database.ts',
  'embedded-supervisor.ts': 'runtime/embedded-supervisor.ts',
  'port-check.ts': 'runtime/port-check.ts',
  'logging.ts': 'runtime/logging.ts',
  'health.ts': 'runtime/health.ts',
  'backup-cli.ts': 'runtime/backup-cli.ts',
  'lru.ts': 'runtime/lru.ts',
  'receipts.ts': 'runtime/receipts.ts',
  'pg-listener.ts': 'runtime/pg-listener.ts',
  'inbox-cache.ts': 'runtime/inbox-cache.ts',
  'event-notify.ts': 'runtime/event-notify.ts',
  'scheduler.ts': 'runtime/scheduler.ts',
  'webhook-worker.ts': 'runtime/webhook-worker.ts',
  'webhook-delivery.ts': 'runtime/webhook-delivery.ts',
};

/** A new file at the root of apps/server/src placed by its name (the prefix naming the room is dropped where it repeats it). */
const SERVER_SRC_ROOMS: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^(http|auth|oauth|people|runtime)-(.+)$/, (m) => `${m[1]}/${m[2]}`],
  [/^oidc-.+$/, (m) => `oauth/${m[0]}`],
  [/^(?:account|signin|sign-in|passkey|session)-.+$/, (m) => `people/${m[0]}`],
  [/^(?:bearer|api-key|credential)s?-.+$/, (m) => `auth/${m[0]}`],
  [/^(?:mcp|rest|openapi|cors|event-stream|sse|route|routes)(?:-.+)?\.ts$/, (m) => `http/${m[0]}`],
  [/^(?:webhook|event|db|database|pg|scheduler|job|worker|cache|config|backup|embedded)s?-.+$/, (m) => `runtime/${m[0]}`],
  [/^.+-(?:cache|worker|listener|notify|cli)\.ts$/, (m) => `runtime/${m[0]}`],
  [/^.+-(?:limit|limits|routes|route|headers)\.ts$/, (m) => `http/${m[0]}`],
];

export const SERVER_SRC_RULES: Rule[] = [
  // Already in a room: stays. A file in another folder stops the script.
  { from: /^(http|auth|oauth|people|runtime)\//, to: () => null },
  {
    from: /^([^/]+)$/,
    to: (m) => {
      for (const [re, to] of SERVER_SRC_ROOMS) {
        const r = re.exec(m[1]!);
        if (r) return to(r);
      }
      return `unmapped:${m[1]}`;
    },
  },
];
