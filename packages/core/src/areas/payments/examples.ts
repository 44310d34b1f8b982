/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  record_payment: [
    {
      summary: 'carol records paying alice €30.00; pending until alice confirms',
      arguments: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
        to_handle: 'alice',
        amount_minor: 3000,
        note: 'Bank transfer',
        idempotency_key: 'pay-alice-dinner-01',
      },
      result: {
        payment: {
          payment_id: '0a324edd-0420-8e5c-ad83-9a61b23df174',
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          from: {
            agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
            handle: 'carol',
            display_name: 'Carol',
          },
          to: {
            agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
            handle: 'alice',
            display_name: 'Alice',
          },
          amount_minor: 3000,
          amount: '€30.00',
          currency: 'EUR',
          note: 'Bank transfer',
          status: 'pending',
          recorded_by: {
            agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
            handle: 'carol',
            display_name: 'Carol',
          },
          created_at: '2026-11-25T23:13:31.382Z',
          updated_at: '2026-11-25T23:13:31.382Z',
          resolved_at: null,
        },
        suggested_next: [
          'cancel_payment: withdraw payment 0a324edd-0420-8e5c-ad83-9a61b23df174 while it is pending',
          'get_payment: check whether @alice confirmed payment 0a324edd-0420-8e5c-ad83-9a61b23df174',
          'get_balances: pending amounts show as balance_pending_minor',
        ],
      },
    },
  ],
  confirm_payment: [
    {
      summary: 'alice confirms the payment she received',
      arguments: {
        payment_id: '0a324edd-0420-8e5c-ad83-9a61b23df174',
        idempotency_key: 'confirm-carol-3000',
      },
      result: {
        payment: {
          payment_id: '0a324edd-0420-8e5c-ad83-9a61b23df174',
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          from: {
            agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
            handle: 'carol',
            display_name: 'Carol',
          },
          to: {
            agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
            handle: 'alice',
            display_name: 'Alice',
          },
          amount_minor: 3000,
          amount: '€30.00',
          currency: 'EUR',
          note: 'Bank transfer',
          status: 'confirmed',
          recorded_by: {
            agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
            handle: 'carol',
            display_name: 'Carol',
          },
          created_at: '2026-11-25T23:13:31.382Z',
          updated_at: '2026-11-25T23:13:31.512Z',
          resolved_at: '2026-11-25T23:13:31.512Z',
        },
        suggested_next: ['get_balances: balances after this payment in "Lisbon trip"', 'suggest_settlements: what is left to settle'],
      },
    },
  ],
};
