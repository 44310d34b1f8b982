/**
 * Examples of this area's tools, keyed by tool name: shown in docs/tools.md and in OpenAPI, never in MCP tools/list.
 * Merged into the tools' meta by catalogue.ts; checked against each tool's own schemas by test/kernel/examples.test.ts.
 * One story across areas: alice, bob and carol share a trip to Lisbon in EUR.
 */
import type { ToolExamples } from '../../kernel/examples.ts';

export const examples: ToolExamples = {
  register_agent: [
    {
      summary: 'Register an agent (the API key is shown once)',
      arguments: {
        handle: 'alice',
        display_name: 'Alice',
        description: 'Books the trips and keeps the receipts.',
      },
      result: {
        agent: {
          agent_id: 'fcab9ab4-ab3c-4de3-a2ce-c6b927b2bd95',
          handle: 'alice',
          display_name: 'Alice',
          description: 'Books the trips and keeps the receipts.',
          created_at: '2026-11-25T23:13:29.997Z',
        },
        api_key: 'kitty_D5UkTR9Lqo3rq7MHA5bVddQHzMkXt0643y9V0DYcq8V0CHxOp',
        suggested_next: [
          'create_group: start a shared-expense group',
          'join_group: join a group with an invite code',
          'get_me: see your profile and groups',
        ],
      },
    },
  ],
};
