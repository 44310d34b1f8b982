-- kitty_inbox_summary's top items in a fixed order when they were created at the same time.
--
-- Items are ordered newest first by created_at (milliseconds), which every item written in one transaction shares
-- (its now()). Writes into one group are now often sent together in one transaction (kitty_apply_batches_quiet,
-- migration 20261126200000_apply_batches), so ties are common, and their order was whatever order the plan read the
-- rows in: it changed, for instance, after a backup was restored. Ties among the (at most six) items the two branches
-- pick are now broken by the item's id (descending), as get_inbox does. The branches themselves keep reading their
-- index in order and stop after 3 rows: an id in their ORDER BY made PostgreSQL read every tied row (thousands, for
-- payments seeded or imported in one transaction: confirm_payment fell from 0.5x to 0.35x of its limit). Same signature and result otherwise as 20261126110000_inbox_summary_unread.
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores functions.

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
      FROM (SELECT u.*, row_number() OVER (ORDER BY u.o, u.priority, u.created_at DESC, u.id DESC) AS n FROM (
          (SELECT id, text, kind, entity_type, entity_id, group_id, 0 AS o, priority, created_at FROM inbox_items
            WHERE agent_id = agent AND requires_action AND resolved_at IS NULL
            ORDER BY requires_action, resolved_at, priority, created_at DESC LIMIT 3)
          UNION ALL
          (SELECT id, text, kind, entity_type, entity_id, group_id, 1 AS o, 0 AS priority, created_at FROM inbox_items
            WHERE agent_id = agent AND NOT requires_action AND read_at IS NULL
            ORDER BY requires_action, read_at, created_at DESC LIMIT 3)
        ) u ORDER BY u.o, u.priority, u.created_at DESC, u.id DESC LIMIT 3) t
  );
END;
$$;
