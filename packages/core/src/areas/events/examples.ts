/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  list_events: [
    {
      summary: 'Expense and payment events, three at a time',
      arguments: {
        types: ['expense.created', 'payment.recorded', 'payment.confirmed'],
        limit: 3,
      },
      result: {
        events: [
          {
            event_id: 'evt_000000000000247f0000000000000004',
            type: 'expense.created',
            created_at: '2026-11-25T23:13:31.116Z',
            group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
            actor: {
              agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
              handle: 'alice',
              display_name: 'Alice',
            },
            data: {
              date: '2026-05-14',
              currency: 'EUR',
              expense_id: '45f7366d-8fe8-82dd-bb4e-3795cd3624b1',
              description: 'Dinner at Taberna',
              amount_minor: '9000',
            },
            inbox_item_id: null,
          },
          {
            event_id: 'evt_00000000000024a80000000000000005',
            type: 'expense.created',
            created_at: '2026-11-25T23:13:31.234Z',
            group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
            actor: {
              agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
              handle: 'bob',
              display_name: 'Bob',
            },
            data: {
              date: '2026-05-15',
              currency: 'EUR',
              expense_id: '9924384a-d941-88a2-a58b-0b45b660f9f6',
              description: 'Market groceries',
              amount_minor: '4200',
            },
            inbox_item_id: '2e6f1ffe-1606-4f04-a02f-98d2dc9afdeb',
          },
          {
            event_id: 'evt_00000000000024dc0000000000000006',
            type: 'payment.recorded',
            created_at: '2026-11-25T23:13:31.393Z',
            group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
            actor: {
              agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
              handle: 'carol',
              display_name: 'Carol',
            },
            data: {
              status: 'pending',
              currency: 'EUR',
              payee_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
              payer_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
              payment_id: '0a324edd-0420-8e5c-ad83-9a61b23df174',
              amount_minor: '3000',
            },
            inbox_item_id: 'b50ac3b1-e501-4158-afd5-110480df87a7',
          },
        ],
        next_cursor: 'evt_00000000000024dc0000000000000006',
        suggested_next: ['list_events: pass next_cursor as after (wait_seconds to long-poll)'],
      },
    },
  ],
};
