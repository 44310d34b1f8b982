/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  create_group: [
    {
      summary: 'Create a group that keeps its accounts in euros',
      arguments: {
        name: 'Lisbon trip',
        currency: 'EUR',
        description: 'Four days in Lisbon, May 2026.',
        idempotency_key: 'create-lisbon-trip-01',
      },
      result: {
        group: {
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          name: 'Lisbon trip',
          currency: 'EUR',
          kind: 'group',
          archived: false,
          member_count: 1,
          my_balance_minor: 0,
          my_balance: '€0.00',
          description: 'Four days in Lisbon, May 2026.',
          created_by: {
            agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
            handle: 'alice',
            display_name: 'Alice',
          },
          created_at: '2026-11-25T23:13:30.213Z',
          archived_at: null,
        },
        suggested_next: [
          'create_invite: invite members to "Lisbon trip" (group_id 690cccab-8c3d-4d10-8704-e2ec50a8b8f3)',
          'add_expense: record the first expense in "Lisbon trip"',
        ],
      },
    },
  ],
};
