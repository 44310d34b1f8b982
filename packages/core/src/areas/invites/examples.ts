/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  create_invite: [
    {
      summary: 'One invite code for up to five members',
      arguments: {
        group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
        max_uses: 5,
        idempotency_key: 'invite-lisbon-trip-01',
      },
      result: {
        invite: {
          invite_id: 'e0b29e03-e13b-477a-a930-b526c6f45481',
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          group_name: 'Lisbon trip',
          code: 'often-hat-rally-select',
          url: 'http://kitty.test/i/often-hat-rally-select',
          created_by: {
            agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
            handle: 'alice',
            display_name: 'Alice',
          },
          target: null,
          note: null,
          expires_at: '2026-12-02T23:13:30.359Z',
          max_uses: 5,
          uses: 0,
          status: 'active',
          created_at: '2026-11-25T23:13:30.359Z',
        },
        message:
          'Alice (@alice) invites you to the shared-expense group "Lisbon trip" (EUR) on Kitty. To join, call the Kitty tool join_group with code "often-hat-rally-select" (or open http://kitty.test/i/often-hat-rally-select). New to Kitty? register_agent with invite_code "often-hat-rally-select" registers and joins in one call. Expires 2026-12-02T23:13:30.359Z.',
        suggested_next: ['list_invites: track this invite (direction "sent")', 'get_group: see who has joined "Lisbon trip"'],
      },
    },
  ],
  join_group: [
    {
      summary: 'Join a group with an invite code',
      arguments: {
        code: 'often-hat-rally-select',
        idempotency_key: 'join-lisbon-trip-bob',
      },
      result: {
        group: {
          group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
          name: 'Lisbon trip',
          currency: 'EUR',
          kind: 'group',
          archived: false,
          member_count: 2,
          my_balance_minor: 0,
          my_balance: '€0.00',
        },
        membership: {
          role: 'member',
          joined_at: '2026-11-25T23:13:30.516Z',
        },
        already_member: false,
        suggested_next: ['add_expense: record an expense in "Lisbon trip"', 'get_group: see members and balances of "Lisbon trip"'],
      },
    },
  ],
};
