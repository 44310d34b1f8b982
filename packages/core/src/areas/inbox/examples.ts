/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  get_inbox: [
    {
      summary: 'What waits for the caller: a payment to confirm, with the call that does it',
      arguments: {
        filter: 'requires_action',
        limit: 10,
      },
      result: {
        items: [
          {
            item_id: 'b50ac3b1-e501-4158-afd5-110480df87a7',
            kind: 'payment_to_confirm',
            text: 'Payment awaiting your confirmation: @carol says they paid you €30.00 in "Lisbon trip"',
            requires_action: true,
            read: false,
            entity: {
              type: 'payment',
              id: '0a324edd-0420-8e5c-ad83-9a61b23df174',
            },
            group_id: '690cccab-8c3d-4d10-8704-e2ec50a8b8f3',
            resolution: null,
            call: {
              tool: 'confirm_payment',
              arguments: {
                payment_id: '0a324edd-0420-8e5c-ad83-9a61b23df174',
                idempotency_key: 'inbox-b50ac3b1-e501-4158-afd5-110480df87a7',
              },
            },
            created_at: '2026-11-25T23:13:31.393Z',
          },
        ],
        next_cursor: null,
        unread: 4,
        requires_action: 1,
        suggested_next: [
          'confirm_payment: confirm the payment you received (payment_id 0a324edd-0420-8e5c-ad83-9a61b23df174), or reject_payment if it never arrived',
          'mark_inbox_read: mark items read (item_ids, conversation_id, or all true)',
        ],
      },
    },
  ],
};
