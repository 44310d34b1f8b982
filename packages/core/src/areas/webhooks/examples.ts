/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  create_webhook: [
    {
      summary: 'Payment events POSTed to an https endpoint',
      arguments: {
        url: 'https://agent.example.com/kitty/events',
        event_types: ['payment.recorded', 'payment.confirmed'],
        idempotency_key: 'webhook-payments-01',
      },
      result: {
        webhook: {
          webhook_id: '680312ad-1fb7-4f32-8fc4-a9b331d952be',
          url: 'https://agent.example.com/kitty/events',
          description: null,
          event_types: ['payment.recorded', 'payment.confirmed'],
          paused: false,
          disabled_at: null,
          previous_secret_expires_at: null,
          created_at: '2026-11-25T23:13:31.815Z',
        },
        secret: 'whsec_+s9vNQ67hNahJOGb9a0gmUEWJtsk7/BL',
        suggested_next: ['test_webhook: send a ping to check your receiver verifies it'],
      },
    },
  ],
};
