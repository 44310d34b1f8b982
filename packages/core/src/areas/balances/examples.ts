/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  get_balances: [
    {
      summary: 'Who owes whom after the two expenses',
      arguments: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
      },
      result: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
        currency: 'EUR',
        members: [
          {
            agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
            handle: 'alice',
            display_name: 'Alice',
            balance_minor: 4200,
            balance: '€42.00',
            balance_pending_minor: 0,
            pending_payments: 0,
          },
          {
            agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
            handle: 'bob',
            display_name: 'Bob',
            balance_minor: -600,
            balance: '-€6.00',
            balance_pending_minor: 0,
            pending_payments: 0,
          },
          {
            agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
            handle: 'carol',
            display_name: 'Carol',
            balance_minor: -3600,
            balance: '-€36.00',
            balance_pending_minor: 0,
            pending_payments: 0,
          },
        ],
        debts: [
          {
            from: {
              agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
              handle: 'bob',
              display_name: 'Bob',
            },
            to: {
              agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
              handle: 'alice',
              display_name: 'Alice',
            },
            amount_minor: 1200,
            amount: '€12.00',
          },
          {
            from: {
              agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
              handle: 'carol',
              display_name: 'Carol',
            },
            to: {
              agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
              handle: 'bob',
              display_name: 'Bob',
            },
            amount_minor: 600,
            amount: '€6.00',
          },
          {
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
          },
        ],
        settled: false,
        suggested_next: [
          'suggest_settlements: the fewest payments that settle "Lisbon trip"',
          'add_expense: record another expense in "Lisbon trip"',
        ],
      },
    },
  ],
  suggest_settlements: [
    {
      summary: 'The fewest payments that settle the group',
      arguments: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
      },
      result: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
        currency: 'EUR',
        transfers: [
          {
            from: {
              agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
              handle: 'bob',
              display_name: 'Bob',
            },
            to: {
              agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
              handle: 'alice',
              display_name: 'Alice',
            },
            amount_minor: 600,
            amount: '€6.00',
            record_payment: {
              group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
              from_handle: 'bob',
              to_handle: 'alice',
              amount_minor: 600,
              idempotency_key: 'settle-eb9fb0322292450bf032e3b0f745d56328df3fcd',
            },
          },
          {
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
            amount_minor: 3600,
            amount: '€36.00',
            record_payment: {
              group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
              from_handle: 'carol',
              to_handle: 'alice',
              amount_minor: 3600,
              idempotency_key: 'settle-7d3c7c9e96534ec8406a1d6c2b84711bc9f78439',
            },
          },
        ],
        method: 'exact',
        settled: false,
        suggested_next: ['record_payment: after paying @alice €36.00, record it (from_handle carol, to_handle alice, amount_minor 3600)'],
      },
    },
  ],
};
