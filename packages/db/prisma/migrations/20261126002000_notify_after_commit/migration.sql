-- Wake-ups after COMMIT for batched writes (the hot path).
--
-- A transaction that sends NOTIFY takes PostgreSQL's notify-queue lock at commit and holds it while its commit record
-- is flushed: the commits of all notifying transactions in the cluster queue behind each other. Measured on
-- kitty_apply_batch from 10 connections: 131–147 writes/s with the kitty_events and kitty_inbox notifications inside
-- the write, 316–405/s without. So a batched write now runs as kitty_apply_batch_quiet(doc): it sets
-- kitty.notify_after_commit for its own transaction, the inbox-counter trigger and kitty_append_events skip their
-- NOTIFY, and the application sends the same notifications (kitty_events: recipients, comma-separated or '*';
-- kitty_inbox: one per agent id) in one statement after COMMIT (packages/core kernel/wakes.ts). The event log and the
-- counters stay the truth: a lost wake-up only delays an SSE/long-poll reader until its periodic re-read, and the
-- inbox cache until its entry expires. Interactive transactions still notify from inside, as before.
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores functions.

CREATE OR REPLACE FUNCTION kitty_notify_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF coalesce(current_setting('kitty.notify_after_commit', true), '') <> 'on' THEN
    PERFORM pg_notify('kitty_inbox', NEW.id::text);
  END IF;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION kitty_append_events(evs jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n int := coalesce(jsonb_array_length(evs), 0);
  tx bigint;
  ev jsonb;
  eid bigint;
  who text;
BEGIN
  IF n = 0 THEN RETURN; END IF;
  tx := pg_current_xact_id()::text::bigint;
  IF n = 1 THEN
    ev := evs->0;
    INSERT INTO events (id, txid, type, group_id, actor_id, data)
    VALUES (nextval('events_id_seq'), tx, ev->>'type', (ev->>'group_id')::uuid, (ev->>'actor_id')::uuid, coalesce(nullif(ev->'data', 'null'::jsonb), '{}'::jsonb))
    RETURNING id INTO eid;
    -- recipients[i] with inbox_items[i] (the shorter array padded with NULL; JSON null is NULL)
    INSERT INTO event_recipients (agent_id, txid, event_id, inbox_item_id)
    SELECT r.agent_id::uuid, tx, eid, r.item::uuid
    FROM ROWS FROM (jsonb_array_elements_text(ev->'recipients'), jsonb_array_elements_text(ev->'inbox_items')) AS r(agent_id, item)
    WHERE r.agent_id IS NOT NULL;
    SELECT CASE WHEN count(x) <= 150 THEN string_agg(x, ',') ELSE '*' END INTO who
    FROM jsonb_array_elements_text(ev->'recipients') x;
  ELSE
    WITH e AS MATERIALIZED (
      SELECT nextval('events_id_seq') AS id, x.*
      FROM (SELECT * FROM ROWS FROM (jsonb_to_recordset(evs) AS (type text, group_id uuid, actor_id uuid, data jsonb,
        recipients uuid[], inbox_items uuid[])) WITH ORDINALITY AS x(type, group_id, actor_id, data, recipients, inbox_items, n) ORDER BY n) x),
    ins AS (
      INSERT INTO events (id, txid, type, group_id, actor_id, data)
      SELECT e.id, tx, e.type, e.group_id, e.actor_id, coalesce(e.data, '{}'::jsonb) FROM e),
    rec AS (
      INSERT INTO event_recipients (agent_id, txid, event_id, inbox_item_id)
      SELECT r.agent_id, tx, e.id, r.item FROM e CROSS JOIN LATERAL unnest(e.recipients, e.inbox_items) AS r(agent_id, item)
      WHERE r.agent_id IS NOT NULL
      RETURNING agent_id)
    SELECT CASE WHEN count(DISTINCT agent_id) <= 150 THEN string_agg(DISTINCT agent_id::text, ',') ELSE '*' END INTO who FROM rec;
  END IF;
  -- A batched write (kitty_apply_batch_quiet) sends its wake-ups after COMMIT instead.
  IF who IS NOT NULL AND coalesce(current_setting('kitty.notify_after_commit', true), '') <> 'on' THEN
    PERFORM pg_notify('kitty_events', who);
  END IF;
END;
$$;

CREATE FUNCTION kitty_apply_batch_quiet(doc jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('kitty.notify_after_commit', 'on', true);
  RETURN kitty_apply_batch(doc);
END;
$$;
