/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  add_expense: [
    {
      summary: 'A dinner paid by alice, split equally among three',
      arguments: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
        description: 'Dinner at Taberna',
        amount_minor: 9000,
        category: 'food',
        date: '2026-05-14',
        payers: [
          {
            handle: 'alice',
          },
        ],
        split: {
          method: 'equal',
          participants: [
            {
              handle: 'alice',
            },
            {
              handle: 'bob',
            },
            {
              handle: 'carol',
            },
          ],
        },
        idempotency_key: 'dinner-taberna-0514',
      },
      result: {
        expense: {
          expense_id: '45f7366d-8fe8-82dd-bb4e-3795cd3624b1',
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          description: 'Dinner at Taberna',
          amount_minor: 9000,
          amount: '€90.00',
          currency: 'EUR',
          date: '2026-05-14',
          category: 'food',
          notes: null,
          category_id: 'food',
          split_method: 'equal',
          original_currency: null,
          original_amount_minor: null,
          exchange_rate: null,
          shares: [
            {
              agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
              handle: 'bob',
              display_name: 'Bob',
              paid_minor: 0,
              owed_minor: 3000,
              net_minor: -3000,
              split_value: '1',
            },
            {
              agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
              handle: 'carol',
              display_name: 'Carol',
              paid_minor: 0,
              owed_minor: 3000,
              net_minor: -3000,
              split_value: '1',
            },
            {
              agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
              handle: 'alice',
              display_name: 'Alice',
              paid_minor: 9000,
              owed_minor: 3000,
              net_minor: 6000,
              split_value: '1',
            },
          ],
          items: null,
          tax_minor: null,
          tip_minor: null,
          created_by: {
            agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
            handle: 'alice',
            display_name: 'Alice',
          },
          created_at: '2026-11-25T23:13:31.090Z',
          updated_at: '2026-11-25T23:13:31.090Z',
          deleted: false,
          deleted_at: null,
          recurrence: null,
          occurrence_index: null,
        },
        suggested_next: [
          'get_balances: see who owes whom in "Lisbon trip" now',
          'suggest_settlements: the fewest payments that settle "Lisbon trip"',
          'update_expense: correct expense 45f7366d-8fe8-82dd-bb4e-3795cd3624b1 if something is off',
        ],
      },
    },
    {
      summary: 'Groceries split per item: the wine between two, bread and cheese among all three',
      arguments: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
        description: 'Market groceries',
        date: '2026-05-15',
        payers: [
          {
            handle: 'bob',
          },
        ],
        items: [
          {
            description: 'Wine',
            amount_minor: 2400,
            split: {
              method: 'equal',
              participants: [
                {
                  handle: 'alice',
                },
                {
                  handle: 'bob',
                },
              ],
            },
          },
          {
            description: 'Bread and cheese',
            amount_minor: 1800,
          },
        ],
        idempotency_key: 'groceries-market-0515',
      },
      result: {
        expense: {
          expense_id: '9924384a-d941-88a2-a58b-0b45b660f9f6',
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          description: 'Market groceries',
          amount_minor: 4200,
          amount: '€42.00',
          currency: 'EUR',
          date: '2026-05-15',
          category: null,
          notes: null,
          category_id: 'general',
          split_method: 'itemized',
          original_currency: null,
          original_amount_minor: null,
          exchange_rate: null,
          shares: [
            {
              agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
              handle: 'bob',
              display_name: 'Bob',
              paid_minor: 4200,
              owed_minor: 1800,
              net_minor: 2400,
              split_value: null,
            },
            {
              agent_id: 'a9e8ccdf-34f4-4ea3-b491-6bbbb997ea01',
              handle: 'carol',
              display_name: 'Carol',
              paid_minor: 0,
              owed_minor: 600,
              net_minor: -600,
              split_value: null,
            },
            {
              agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
              handle: 'alice',
              display_name: 'Alice',
              paid_minor: 0,
              owed_minor: 1800,
              net_minor: -1800,
              split_value: null,
            },
          ],
          items: [
            {
              description: 'Wine',
              amount_minor: 2400,
              split_method: 'equal',
              shares: [
                {
                  handle: 'bob',
                  owed_minor: 1200,
                },
                {
                  handle: 'alice',
                  owed_minor: 1200,
                },
              ],
            },
            {
              description: 'Bread and cheese',
              amount_minor: 1800,
              split_method: 'equal',
              shares: [
                {
                  handle: 'bob',
                  owed_minor: 600,
                },
                {
                  handle: 'carol',
                  owed_minor: 600,
                },
                {
                  handle: 'alice',
                  owed_minor: 600,
                },
              ],
            },
          ],
          tax_minor: 0,
          tip_minor: 0,
          created_by: {
            agent_id: '91df6811-f55f-4757-90d6-ebb5d641e633',
            handle: 'bob',
            display_name: 'Bob',
          },
          created_at: '2026-11-25T23:13:31.195Z',
          updated_at: '2026-11-25T23:13:31.195Z',
          deleted: false,
          deleted_at: null,
          recurrence: null,
          occurrence_index: null,
        },
        suggested_next: [
          'get_balances: see who owes whom in "Lisbon trip" now',
          'suggest_settlements: the fewest payments that settle "Lisbon trip"',
          'update_expense: correct expense 9924384a-d941-88a2-a58b-0b45b660f9f6 if something is off',
        ],
      },
    },
  ],
};
