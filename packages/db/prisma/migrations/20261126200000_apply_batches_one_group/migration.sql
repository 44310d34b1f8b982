-- Several batched writes into one group in one statement and one transaction (group commit).
--
-- Writes into one group serialise on its member rows: each holds them from its lock to its COMMIT, and the COMMIT waits
-- for the WAL flush. An instance that has a write into a group in flight queues the next ones for that group and sends
-- them together when it completes (packages/core kernel/group-lanes.ts): one statement, one COMMIT, one WAL flush for
-- all of them, and each still stores its own idempotency record, rows, activity, events and answer.
--
-- kitty_apply_batches_quiet(docs): docs is a JSON array of kitty_apply_batch documents of one group (docs[0].group_id).
-- It answers the array of kitty_apply_batch's answers, in order. The documents run in order, each seeing the ones
-- before it, exactly as if they had been sent one after another. It raises like kitty_apply_batch: any error (a stale
-- guard, KB001, included) rolls back the whole statement, and the application then sends each document on its own, so
-- each gets its own answer.
--
-- Locks: first the group row (FOR SHARE, as every batched write's guard), then the member rows of every document's
-- balance changes in id order, then the agent rows of every document's counters in id order: the order every write
-- takes them in (kernel/write-batch.ts), taken once for all the documents instead of per document (document by document,
-- a later one could want a row ordered before one an earlier one holds, and deadlock with another writer).
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores them.

CREATE FUNCTION kitty_apply_batches_quiet(docs jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  g uuid := (docs->0->>'group_id')::uuid;
  member_agents uuid[];
  counter_agents uuid[];
  answers jsonb := '[]'::jsonb;
  d jsonb;
BEGIN
  IF g IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements(docs) x WHERE (x->>'group_id')::uuid IS DISTINCT FROM g) THEN
    RAISE EXCEPTION 'kitty_apply_batches_quiet: every document must name the same group_id' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('kitty.notify_after_commit', 'on', true);
  PERFORM 1 FROM groups WHERE id = g FOR SHARE;
  member_agents := ARRAY(
    SELECT DISTINCT x.agent_id FROM jsonb_array_elements(docs) e,
      jsonb_to_recordset(coalesce(e->'pending', '[]'::jsonb) || coalesce(e->'balances', '[]'::jsonb)) x(agent_id uuid)
    ORDER BY 1);
  IF cardinality(member_agents) > 0 THEN
    PERFORM 1 FROM memberships m WHERE m.group_id = g AND m.agent_id = ANY (member_agents) ORDER BY m.agent_id FOR NO KEY UPDATE;
  END IF;
  counter_agents := ARRAY(
    SELECT DISTINCT x.agent_id FROM jsonb_array_elements(docs) e, jsonb_to_recordset(coalesce(e->'counters', '[]'::jsonb)) x(agent_id uuid)
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
