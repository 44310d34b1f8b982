-- kitty_append_events, cheaper for the one-event case every batched hot write sends: the event's row and its
-- recipients in one statement (a data-modifying CTE) instead of two, and the NOTIFY payload built only when it is sent
-- (inside kitty_apply_batch_quiet the write's wake-ups are sent after COMMIT by the application, so it was built for
-- nothing). Same signature, same rows, same NOTIFY. Several events keep the set statement of 20261126000000.
-- Functions are outside Prisma's schema language: written by hand; migration:check ignores functions.

CREATE OR REPLACE FUNCTION kitty_append_events(evs jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  n int := coalesce(jsonb_array_length(evs), 0);
  tx bigint;
  ev jsonb;
  who text;
  quiet boolean := coalesce(current_setting('kitty.notify_after_commit', true), '') = 'on';
BEGIN
  IF n = 0 THEN RETURN; END IF;
  tx := pg_current_xact_id()::text::bigint;
  IF n = 1 THEN
    ev := evs->0;
    -- recipients[i] with inbox_items[i] (the shorter array padded with NULL; JSON null is NULL)
    WITH e AS (
      INSERT INTO events (id, txid, type, group_id, actor_id, data)
      VALUES (nextval('events_id_seq'), tx, ev->>'type', (ev->>'group_id')::uuid, (ev->>'actor_id')::uuid,
              coalesce(nullif(ev->'data', 'null'::jsonb), '{}'::jsonb))
      RETURNING id)
    INSERT INTO event_recipients (agent_id, txid, event_id, inbox_item_id)
    SELECT r.agent_id::uuid, tx, e.id, r.item::uuid
    FROM e, ROWS FROM (jsonb_array_elements_text(ev->'recipients'), jsonb_array_elements_text(ev->'inbox_items')) AS r(agent_id, item)
    WHERE r.agent_id IS NOT NULL;
    IF NOT quiet THEN
      SELECT CASE WHEN count(x) <= 150 THEN string_agg(x, ',') ELSE '*' END INTO who
      FROM jsonb_array_elements_text(ev->'recipients') x;
    END IF;
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
  -- A batched write run as kitty_apply_batch_quiet (migration 20261126002000) sends its wake-ups after COMMIT instead.
  IF who IS NOT NULL AND NOT quiet THEN
    PERFORM pg_notify('kitty_events', who);
  END IF;
END;
$$;
