-- The inbox summary's second half (the newest unread items that never required action) read in index order.
--
-- It was served by (agent_id, read_at, created_at DESC), which holds the open items requiring action among the
-- unread ones: an agent with thousands of payments waiting for its confirmation and no newer notification stepped over
-- every one of them (a heap fetch each) on every response it got, i.e. on each confirm_payment it made. With 3,000 such
-- items one summary touched 89 shared pages; now a handful (core/test/kernel/inbox-summary.test.ts). The new index
-- puts requires_action before read_at; the function's second branch names it in its ORDER BY so the planner reads
-- the index in order and stops after 3 rows.
--
-- And the function reads the agent's counters first and, when nothing is unread or to do, answers from them without
-- the big query, which takes the counters from there instead of reading the agent row again. (PostgreSQL set up that
-- query's whole plan even where its CASE skipped it, and every batched write asks for its caller's summary.) Measured
-- in a server-side loop of add_expense batches whose caller has nothing unread (CPU of the backend, 9 alternating runs
-- of 200, medians): 812 -> 790 µs per batch; 33 -> 9 µs per summary call alone.
-- Same signature and result as 20261126100000_inbox_summary_cached_plan (NULL: nothing unread, nothing to do, or no
-- such agent).
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores functions.

-- CreateIndex
CREATE INDEX "inbox_items_agent_id_requires_action_read_at_created_at_idx" ON "inbox_items"("agent_id", "requires_action", "read_at", "created_at" DESC);

CREATE OR REPLACE FUNCTION kitty_inbox_summary(agent uuid) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE
  n_unread int;
  n_open int;
BEGIN
  SELECT a.inbox_unread, a.inbox_requires_action INTO n_unread, n_open FROM agents a WHERE a.id = agent;
  -- Nothing unread and nothing to do (most callers of most writes), or no such agent: answered from the agent row
  -- alone, so PostgreSQL does not set up the plan below (window, sorts, aggregates, index scans).
  IF NOT FOUND OR NOT (n_unread > 0 OR n_open > 0) THEN
    RETURN NULL;
  END IF;
  RETURN (
      SELECT jsonb_build_object(
        'unread', n_unread,
        'requires_action', n_open,
        'top', coalesce(jsonb_agg(t.text ORDER BY t.n), '[]'::jsonb),
        'top_items', coalesce(jsonb_agg(jsonb_build_object(
            'item_id', t.id, 'kind', t.kind, 'requires_action', t.o = 0,
            'entity_type', t.entity_type, 'entity_id', t.entity_id, 'group_id', t.group_id,
            'code', CASE WHEN t.o = 0 AND t.entity_type = 'invite' AND t.entity_id ~ '^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$'
                      THEN (SELECT i.code FROM invites i WHERE i.id = t.entity_id::uuid AND i.expires_at > now()) END)
          ORDER BY t.n), '[]'::jsonb))
      FROM (SELECT u.*, row_number() OVER (ORDER BY u.o, u.priority, u.created_at DESC) AS n FROM (
          (SELECT id, text, kind, entity_type, entity_id, group_id, 0 AS o, priority, created_at FROM inbox_items
            WHERE agent_id = agent AND requires_action AND resolved_at IS NULL
            ORDER BY requires_action, resolved_at, priority, created_at DESC LIMIT 3)
          UNION ALL
          (SELECT id, text, kind, entity_type, entity_id, group_id, 1 AS o, 0 AS priority, created_at FROM inbox_items
            WHERE agent_id = agent AND NOT requires_action AND read_at IS NULL
            ORDER BY requires_action, read_at, created_at DESC LIMIT 3)
        ) u ORDER BY u.o, u.priority, u.created_at DESC LIMIT 3) t
  );
END;
$$;
