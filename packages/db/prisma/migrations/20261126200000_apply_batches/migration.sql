-- Several batched writes in one statement and one transaction (group commit).
--
-- Each batched write was one statement and one transaction, so each paid a COMMIT (and its WAL flush), a round trip
-- and the statement's start; writes into one group also held its member rows until their COMMIT was flushed, one after
-- another. An instance now keeps one batched write in flight per group (two for writes into no existing group,
-- create_group); the ones that arrive meanwhile queue and are sent together (packages/core kernel/group-commit.ts):
-- one statement, one COMMIT, one WAL flush for all of them, and each still stores its own idempotency record, rows,
-- activity, events and answer.
--
-- kitty_apply_batches_quiet(docs): docs is a JSON array of kitty_apply_batch documents (of any groups; the application
-- sends those of one group, or of none). It answers the array of kitty_apply_batch's answers, in order. The documents
-- run in order, each seeing the ones before it, exactly as if they had been sent one after another. It raises like kitty_apply_batch: any error (a stale guard, KB001,
-- included) rolls back the whole statement, and the application then sends each document on its own, so each gets its
-- own answer.
--
-- Locks: before any document runs, the rows the documents lock, all at once and class by class in the order a single
-- write takes them (kernel/write-batch.ts), each class in id order: the guarded groups' rows (FOR SHARE), the payments
-- their guards move, the member rows of their balance changes (by group, then agent), the open inbox items they resolve
-- (as mark_inbox_read locks an agent's items: in id order), then the agent rows whose inbox counters change (the
-- documents' counters and the recipients of those items). Taken document by document instead, a later document could
-- want a row ordered before one an earlier document holds, and deadlock with another writer. A deadlock that remains
-- (two statements carrying the same idempotency key, say) rolls the statement back like any error, and the
-- application sends its documents again (a single write rolled back by one is decided and sent again).
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores them.

CREATE FUNCTION kitty_apply_batches_quiet(docs jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  group_ids uuid[];
  payment_ids uuid[];
  item_ids uuid[];
  counter_agents uuid[];
  members record;
  answers jsonb := '[]'::jsonb;
  d jsonb;
BEGIN
  PERFORM set_config('kitty.notify_after_commit', 'on', true);
  group_ids := ARRAY(SELECT DISTINCT (e->>'group_id')::uuid FROM jsonb_array_elements(docs) e WHERE e ? 'guard' ORDER BY 1);
  IF cardinality(group_ids) > 0 THEN
    PERFORM 1 FROM groups WHERE id = ANY (group_ids) ORDER BY id FOR SHARE;
  END IF;
  payment_ids := ARRAY(SELECT DISTINCT (e#>>'{guard,payment,id}')::uuid FROM jsonb_array_elements(docs) e
                       WHERE e #> '{guard,payment}' IS NOT NULL ORDER BY 1);
  IF cardinality(payment_ids) > 0 THEN
    PERFORM 1 FROM payments WHERE id = ANY (payment_ids) ORDER BY id FOR NO KEY UPDATE;
  END IF;
  -- By primary key, one group at a time (= ANY of its agents): joined to the recordset, the planner would estimate
  -- 100 rows and may scan every member row of a large group.
  FOR members IN
    SELECT (e->>'group_id')::uuid AS group_id, array_agg(DISTINCT x.agent_id ORDER BY x.agent_id) AS agent_ids
    FROM jsonb_array_elements(docs) e,
      jsonb_to_recordset(coalesce(e->'pending', '[]'::jsonb) || coalesce(e->'balances', '[]'::jsonb)) x(agent_id uuid)
    GROUP BY 1 ORDER BY 1
  LOOP
    PERFORM 1 FROM memberships m WHERE m.group_id = members.group_id AND m.agent_id = ANY (members.agent_ids)
      ORDER BY m.agent_id FOR NO KEY UPDATE;
  END LOOP;
  -- The open items each resolve names, by the (entity_type, entity_id) index, one entity at a time.
  item_ids := ARRAY(
    SELECT i.id FROM jsonb_array_elements(docs) e, jsonb_to_recordset(coalesce(e->'resolve', '[]'::jsonb)) r(entity_type text, entity_id text),
      LATERAL (SELECT i.id FROM inbox_items i
               WHERE i.entity_type = r.entity_type AND i.entity_id = r.entity_id AND i.requires_action AND i.resolved_at IS NULL) i
    ORDER BY 1);
  IF cardinality(item_ids) > 0 THEN
    PERFORM 1 FROM inbox_items WHERE id = ANY (item_ids) ORDER BY id FOR UPDATE;
  END IF;
  counter_agents := ARRAY(
    SELECT x.agent_id FROM jsonb_array_elements(docs) e, jsonb_to_recordset(coalesce(e->'counters', '[]'::jsonb)) x(agent_id uuid)
    UNION
    SELECT i.agent_id FROM inbox_items i WHERE i.id = ANY (item_ids)
    ORDER BY 1);
  IF cardinality(counter_agents) > 0 THEN
    PERFORM 1 FROM agents WHERE id = ANY (counter_agents) ORDER BY id FOR NO KEY UPDATE;
  END IF;
  FOR d IN SELECT x FROM jsonb_array_elements(docs) x LOOP
    answers := answers || jsonb_build_array(kitty_apply_batch(d));
  END LOOP;
  RETURN answers;
END;
$$;
