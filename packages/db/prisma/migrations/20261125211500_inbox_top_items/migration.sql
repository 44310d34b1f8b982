-- An inbox an agent can act on.
--
-- 1. inbox_items.resolution: what happened to the cause of an item ("confirmed by @ana", "revoked by @bob"). An item
--    resolved by any path is marked read as well, so it counts neither as unread nor as requiring action. Items
--    resolved before this migration but still unread are marked read now and the counters follow.
-- 2. kitty_inbox_summary also returns top_items (same order as top): item_id, kind, requires_action, entity, group_id
--    and, for an open invite, its code (the service turns each into the one call that acts on it). The two halves are
--    still read in index order and stop after 3 rows; only the (at most 3) invite items cost one primary-key read each.
-- 3. kitty_apply_batch's 'resolve' loop (entries carry `resolution`) is written in 20261125213000, which defines the
--    function once for the three migrations of this release that change it (resolution, events, categories/items).
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores functions.

-- AlterTable
ALTER TABLE "inbox_items" ADD COLUMN "resolution" TEXT;

WITH fixed AS (
  UPDATE inbox_items SET read_at = resolved_at WHERE resolved_at IS NOT NULL AND read_at IS NULL RETURNING agent_id)
UPDATE agents a SET inbox_unread = greatest(a.inbox_unread - f.n, 0)
FROM (SELECT agent_id, count(*)::int AS n FROM fixed GROUP BY agent_id) f WHERE a.id = f.agent_id;

CREATE OR REPLACE FUNCTION kitty_inbox_summary(agent uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN a.inbox_unread > 0 OR a.inbox_requires_action > 0 THEN (
    SELECT jsonb_build_object(
      'unread', a.inbox_unread,
      'requires_action', a.inbox_requires_action,
      'top', coalesce(jsonb_agg(t.text ORDER BY t.n), '[]'::jsonb),
      'top_items', coalesce(jsonb_agg(jsonb_build_object(
          'item_id', t.id, 'kind', t.kind, 'requires_action', t.o = 0,
          'entity_type', t.entity_type, 'entity_id', t.entity_id, 'group_id', t.group_id,
          'code', CASE WHEN t.o = 0 AND t.entity_type = 'invite' AND t.entity_id ~ '^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$'
                    THEN (SELECT i.code FROM invites i WHERE i.id = t.entity_id::uuid AND i.expires_at > now()) END)
        ORDER BY t.n), '[]'::jsonb))
    FROM (SELECT u.*, row_number() OVER (ORDER BY u.o, u.priority, u.created_at DESC) AS n FROM (
        (SELECT id, text, kind, entity_type, entity_id, group_id, 0 AS o, priority, created_at FROM inbox_items
          WHERE agent_id = a.id AND requires_action AND resolved_at IS NULL
          ORDER BY requires_action, resolved_at, priority, created_at DESC LIMIT 3)
        UNION ALL
        (SELECT id, text, kind, entity_type, entity_id, group_id, 1 AS o, 0 AS priority, created_at FROM inbox_items
          WHERE agent_id = a.id AND read_at IS NULL AND NOT requires_action
          ORDER BY read_at, created_at DESC LIMIT 3)
      ) u ORDER BY u.o, u.priority, u.created_at DESC LIMIT 3) t)
  END
  FROM agents a WHERE a.id = agent
$$;
