-- CreateTable
CREATE TABLE "events" (
    "id" BIGSERIAL NOT NULL,
    "txid" BIGINT NOT NULL,
    "type" TEXT NOT NULL,
    "group_id" UUID,
    "actor_id" UUID,
    "data" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "event_recipients" (
    "agent_id" UUID NOT NULL,
    "txid" BIGINT NOT NULL,
    "event_id" BIGINT NOT NULL,
    "inbox_item_id" UUID,

    CONSTRAINT "event_recipients_pkey" PRIMARY KEY ("agent_id","txid","event_id")
);

-- CreateIndex
CREATE INDEX "events_created_at_idx" ON "events"("created_at");

-- CreateIndex
CREATE INDEX "event_recipients_event_id_idx" ON "event_recipients"("event_id");



-- ───────────── Functions (written by hand; migration:check ignores functions) ─────────────
-- kitty_append_events(evs): appends events in the caller's transaction. evs is a JSON array of
--   {type, group_id, actor_id, data, recipients: [agent uuid…], inbox_items: [uuid or null…]}
-- (recipients distinct; inbox_items, when given, parallel to recipients: the item the same change made for each).
-- Each event gets the next id and the transaction's id (txid), then one event_recipients row per recipient,
-- then NOTIFY kitty_events with the recipients (comma-separated; '*' past 150) so waiting readers on every
-- instance query again. Readers return only events whose txid is below kitty_event_horizon(), so an event never
-- commits behind a reader's cursor. No foreign key from
-- event_recipients to events: checking it costs 2 ms per 50-recipient event (docs/events.md); pruning deletes both.
CREATE FUNCTION kitty_append_events(evs jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  tx bigint := pg_current_xact_id()::text::bigint;
  who text;
BEGIN
  IF evs IS NULL OR jsonb_array_length(evs) = 0 THEN RETURN; END IF;
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
  SELECT CASE WHEN count(*) <= 150 THEN string_agg(agent_id::text, ',') ELSE '*' END INTO who FROM rec;
  IF who IS NOT NULL THEN PERFORM pg_notify('kitty_events', who); END IF;
END;
$$;

-- kitty_event_horizon(): readers return only events whose txid is below this, read in a LATER statement (a
-- newer snapshot): the oldest transaction id still running in this database (pg_stat_activity.backend_xid,
-- widened to 64 bits with the epoch), or the next id to be assigned when none is. Every transaction below it
-- has ended, so the later snapshot sees all of its events and no event can ever commit behind a cursor.
-- Transactions of other databases on the same server do not hold the feed back (pg_snapshot_xmin would).
CREATE FUNCTION kitty_event_horizon() RETURNS bigint LANGUAGE sql VOLATILE AS $$
  WITH n AS (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS x),
  running AS (
    SELECT ((n.x >> 32) << 32) | a.backend_xid::text::bigint AS full_xid, n.x
    FROM pg_stat_activity a, n
    WHERE a.datname = current_database() AND a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid())
  SELECT least(n.x, (SELECT min(CASE WHEN full_xid >= x THEN full_xid - 4294967296 ELSE full_xid END) FROM running)) FROM n
$$;

-- kitty_apply_batch appends the batch's events (`b->'events'`, through kitty_append_events): written in
-- 20261125213000, which defines the function once for this release's three changes to it.
