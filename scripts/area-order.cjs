/**
 * Catalogue areas of packages/core, lowest first: an area's files import only the areas before it.
 * Read by .dependency-cruiser.cjs (the import rules) and scripts/move-by-area-table.ts (where files go).
 */
module.exports = [
  'ledger',
  'reference',
  'contacts',
  'messages',
  'invites',
  'inbox',
  'events',
  'webhooks',
  'account',
  'groups',
  'expenses',
  'payments',
  'balances',
  'stats',
  'receipts',
  'records',
];
