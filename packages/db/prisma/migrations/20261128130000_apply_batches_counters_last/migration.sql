-- Writes sent together (kitty_apply_batches_quiet) lock the agent rows whose inbox counters they change after their
-- last document instead of before their first. Before, the statement locked them up front and held them to COMMIT,
-- and one agent is often a recipient in many groups (the payee of payments in every group they share): the
-- instance's two statements in flight waited for each other on that row. Measured from 10 connections into 10 groups
-- (one run each, pg_stat_user_functions): kitty_apply_batches_quiet per call, add_expense (three members shared by
-- every group) 4.09 -> 3.70 ms, record_payment (one payee) 2.7 -> 2.3 ms, for ~2.7 documents a call.
--
-- kitty_apply_batch, when kitty_apply_batches_quiet sets kitty.defer_counters for its transaction, answers its counter
-- changes (the answer's "counters", which kitty_apply_batches_quiet removes) instead of applying them; the caller's
-- summary it reads counts what the agent row does not show yet: the caller's changes by the documents before it
-- (counters_before, added to the document by kitty_apply_batches_quiet) and by itself. kitty_inbox_summary(agent,
-- unread_delta, open_delta) is kitty_inbox_summary(agent) with those added to the agent row's counts (and
-- kitty_inbox_summary(agent) now calls it with none). A single write (kitty_apply_batch_quiet, or kitty_apply_batch in
-- an interactive transaction) is unchanged.
--
-- Otherwise as in 20261128100000_apply_batch_fewer_hot_statements (kitty_apply_batch), 20261127160000_resolve_lookups_by_entity
-- (kitty_apply_batches_quiet) and 20261126210000_inbox_summary_tie_break (kitty_inbox_summary). CREATE OR REPLACE
-- resets the functions' settings: the plan cache mode is in the headers, enable_seqscan = off set again below
-- (20261127170000_hot_write_plans_by_key). Functions are outside Prisma's schema language: written by hand;
-- migration:check ignores them.

CREATE FUNCTION kitty_inbox_summary(agent uuid, unread_delta int, open_delta int) RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
DECLARE
  n_unread int;
  n_open int;
BEGIN
  SELECT a.inbox_unread + unread_delta, a.inbox_requires_action + open_delta INTO n_unread, n_open FROM agents a WHERE a.id = agent;
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

ALTER FUNCTION kitty_inbox_summary(uuid, int, int) SET enable_seqscan = off;

-- The summary as the agent row shows it: the same function without deltas, so its body stays in one place.
CREATE OR REPLACE FUNCTION kitty_inbox_summary(agent uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT kitty_inbox_summary(agent, 0, 0)
$$;

CREATE OR REPLACE FUNCTION kitty_apply_batch(b jsonb) RETURNS jsonb LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  g uuid := (b->>'group_id')::uuid;
  guard jsonb := b->'guard';
  rows jsonb := coalesce(b->'rows', '{}'::jsonb);
  counters jsonb := coalesce(b->'counters', '[]'::jsonb);
  rec record;
  resolve_type text;
  resolve_id text;
  resolve_resolution text;
  resolve_holder uuid;
  summary jsonb;
  summary_read boolean := false;
  kept_top uuid[];
  kept_top_resolved boolean := false;
  kept_unread int;
  kept_open int;
  agent_rows tid[];
  ignored text;
  guard_agents uuid[];
  member_rows tid[];
  payment_group uuid;
  group_read_version bigint;
  covered boolean;
  -- Set by kitty_apply_batches_quiet: this document's counter changes are answered ("counters"), not applied; that
  -- statement applies every document's after its last one. It also says what the documents before this one changed
  -- of the caller's counters (counters_before), which the caller's agent row does not show yet.
  defer_counters boolean := current_setting('kitty.defer_counters', true) = 'on';
  before_unread int := coalesce((b#>>'{counters_before,unread}')::int, 0);
  before_open int := coalesce((b#>>'{counters_before,requires_action}')::int, 0);
  own_unread int := 0;
  own_open int := 0;
BEGIN
  IF b ? 'idempotency' THEN
    INSERT INTO idempotency_records (agent_id, tool, key, request_hash, response)
    VALUES ((b#>>'{idempotency,agent_id}')::uuid, b#>>'{idempotency,tool}', b#>>'{idempotency,key}',
            b#>>'{idempotency,request_hash}', b#>'{idempotency,response}')
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      SELECT r.request_hash, r.response INTO rec FROM idempotency_records r
      WHERE r.agent_id = (b#>>'{idempotency,agent_id}')::uuid AND r.tool = b#>>'{idempotency,tool}' AND r.key = b#>>'{idempotency,key}';
      RETURN jsonb_build_object('status', 'duplicate', 'request_hash', rec.request_hash, 'response', rec.response);
    END IF;
  END IF;

  IF guard IS NOT NULL THEN
    -- A locking read answers the newest version of the row once the lock is held, so read_version is the one committed
    -- last (a join that bumped it while this statement waited included).
    IF guard->>'lock' = 'update' THEN
      SELECT read_version INTO group_read_version FROM groups WHERE id = g AND archived_at IS NULL FOR NO KEY UPDATE;
    ELSE
      SELECT read_version INTO group_read_version FROM groups WHERE id = g AND archived_at IS NULL FOR SHARE;
    END IF;
    IF NOT FOUND THEN RAISE EXCEPTION 'group % changed (archived or gone)', g USING ERRCODE = 'KB001'; END IF;
    -- What the decision read of the group besides balances, by its version (groups.read_version, bumped by triggers): a
    -- write decided on a cached read sends it, so a rename, a join, a leave or a new display name since then makes it
    -- decide again. Compared on the row just locked: no other table is read.
    IF guard ? 'read_version' AND group_read_version IS DISTINCT FROM (guard->>'read_version')::bigint THEN
      RAISE EXCEPTION 'group % changed since it was read', g USING ERRCODE = 'KB001';
    END IF;
    -- Each check below that needs a query is nested under the test for its key: a condition holding a query is run as
    -- a statement even when its key is absent, a bare key test is evaluated in place.
    IF guard ? 'roster' THEN
      IF ARRAY(SELECT m.agent_id FROM memberships m WHERE m.group_id = g AND m.left_at IS NULL ORDER BY 1)
          IS DISTINCT FROM ARRAY(SELECT x::uuid FROM jsonb_array_elements_text(guard->'roster') x ORDER BY 1) THEN
        RAISE EXCEPTION 'members of group % changed', g USING ERRCODE = 'KB001';
      END IF;
    END IF;
    -- The same by fingerprint (kitty_group_fingerprint), as instances of an earlier version send it during a deploy.
    IF guard ? 'fingerprint' AND kitty_group_fingerprint(g) IS DISTINCT FROM guard->>'fingerprint' THEN
      RAISE EXCEPTION 'group % changed since it was read', g USING ERRCODE = 'KB001';
    END IF;
    -- Each member row this batch names is read by its whole primary key (group_id, agent_id), one probe per agent in a
    -- correlated subquery (never pulled up into a join): with group_id alone the plan reads every member row of the group.
    IF guard ? 'active' THEN
      IF EXISTS (SELECT 1 FROM jsonb_array_elements_text(guard->'active') x
          WHERE NOT coalesce((SELECT m.left_at IS NULL FROM memberships m WHERE m.group_id = g AND m.agent_id = x::uuid), false)) THEN
        RAISE EXCEPTION 'a member of group % left', g USING ERRCODE = 'KB001';
      END IF;
    END IF;
    -- The payment by its primary key alone (with group_id in the condition a plan may take a group_id index, which reads
    -- every payment of the group); its group is compared after. A payment of another group is never changed: the
    -- exception undoes the statement's update with the rest of the call.
    IF guard ? 'payment' THEN
      UPDATE payments SET status = guard#>>'{payment,to_status}', resolved_at = (guard#>>'{payment,at}')::timestamptz,
        updated_at = (guard#>>'{payment,at}')::timestamptz
      WHERE id = (guard#>>'{payment,id}')::uuid AND status = guard#>>'{payment,from_status}'
      RETURNING group_id INTO payment_group;
      IF payment_group IS DISTINCT FROM g THEN
        RAISE EXCEPTION 'payment % changed', guard#>>'{payment,id}' USING ERRCODE = 'KB001';
      END IF;
    END IF;
    IF guard ? 'balances' THEN
      guard_agents := ARRAY(SELECT DISTINCT e.agent_id FROM jsonb_to_recordset(guard->'balances') e(agent_id uuid) ORDER BY 1);
      -- Locked in id order: the ids' array drives a nested loop whose inner side is one locking probe per id.
      PERFORM 1 FROM unnest(guard_agents) a(agent_id),
        LATERAL (SELECT 1 FROM memberships m WHERE m.group_id = g AND m.agent_id = a.agent_id FOR NO KEY UPDATE) l;
      IF EXISTS (SELECT 1 FROM jsonb_to_recordset(guard->'balances') e(agent_id uuid, balance_minor bigint, balance_pending_minor bigint)
          WHERE NOT coalesce((SELECT m.balance_minor = e.balance_minor AND m.balance_pending_minor = e.balance_pending_minor
                              FROM memberships m WHERE m.group_id = g AND m.agent_id = e.agent_id), false)) THEN
        RAISE EXCEPTION 'balances in group % changed', g USING ERRCODE = 'KB001';
      END IF;
    END IF;
    -- The overpayment rule of a payment decided without balances (record_payment on a cached read): the payer's and the
    -- payee's member rows locked in id order (as for 'balances'), then amount_minor must not exceed what the payer owes
    -- and what the payee is owed, pending payments counted (balance + pending; packages/core assertNotOverpaying); both
    -- must be active members. One statement: the two ids in order drive a nested loop of locking probes by primary key
    -- (VALUES keeps its order), the check aggregates what they locked, and the locked rows' addresses are kept for the
    -- balance update below (member_rows), which then needs no second lock of the same rows.
    IF guard ? 'max_payment' THEN
      SELECT coalesce((guard#>>'{max_payment,amount_minor}')::bigint
                 <= least(greatest(-max(l.held) FILTER (WHERE l.agent_id = (guard#>>'{max_payment,payer_id}')::uuid), 0),
                          greatest(max(l.held) FILTER (WHERE l.agent_id = (guard#>>'{max_payment,payee_id}')::uuid), 0))
                 AND count(*) FILTER (WHERE l.left_at IS NULL) = 2, false),
             array_agg(l.ctid ORDER BY l.agent_id)
      INTO covered, member_rows
      FROM (VALUES (least((guard#>>'{max_payment,payer_id}')::uuid, (guard#>>'{max_payment,payee_id}')::uuid)),
                   (greatest((guard#>>'{max_payment,payer_id}')::uuid, (guard#>>'{max_payment,payee_id}')::uuid))) a(agent_id),
        LATERAL (SELECT m.ctid, m.agent_id, m.balance_minor + m.balance_pending_minor AS held, m.left_at FROM memberships m
                 WHERE m.group_id = g AND m.agent_id = a.agent_id FOR NO KEY UPDATE) l;
      IF NOT covered THEN
        RAISE EXCEPTION 'balances in group % no longer cover the payment', g USING ERRCODE = 'KB001';
      END IF;
    END IF;
    -- Payout methods a write answers with (record_payment's pay_with) as read: the MD5 of each agent's stored methods as
    -- text (NULL when none), as the read computed it (access/groups.ts), so a cached read cannot show old bank details.
    IF guard ? 'payout_methods' THEN
      -- Each agent by its primary key in a correlated subquery (joined to the recordset, estimated at 100 rows, the
      -- plan could scan the whole agents table); an agent not found fails the check.
      IF EXISTS (
          SELECT 1 FROM jsonb_to_recordset(guard->'payout_methods') e(agent_id uuid, md5 text)
          WHERE NOT coalesce((SELECT md5(a.payout_methods::text) IS NOT DISTINCT FROM e.md5 FROM agents a WHERE a.id = e.agent_id), false)) THEN
        RAISE EXCEPTION 'payout methods changed since they were read' USING ERRCODE = 'KB001';
      END IF;
    END IF;
  END IF;

  IF rows ? 'groups' THEN
    INSERT INTO groups (id, name, description, currency, kind, members_can_edit, member_count, created_by, created_at, updated_at)
    SELECT x.id, x.name, x.description, x.currency, coalesce(x.kind, 'group'), coalesce(x.members_can_edit, true), x.member_count,
           x.created_by, x.created_at, x.updated_at
    FROM jsonb_to_recordset(rows->'groups') x(id uuid, name text, description text, currency text, kind text, members_can_edit boolean,
      member_count int, created_by uuid, created_at timestamptz, updated_at timestamptz);
  END IF;
  IF rows ? 'memberships' THEN
    INSERT INTO memberships (group_id, agent_id, role, joined_at)
    SELECT x.group_id, x.agent_id, x.role, x.joined_at
    FROM jsonb_to_recordset(rows->'memberships') x(group_id uuid, agent_id uuid, role text, joined_at timestamptz);
  END IF;
  IF rows ? 'recurrences' THEN
    INSERT INTO recurrences (id, group_id, template, unit, every, start_date, end_date, max_count, next_index, next_date, active, created_by, created_at)
    SELECT x.id, x.group_id, x.template, x.unit, x.every, x.start_date, x.end_date, x.max_count, x.next_index, x.next_date, x.active,
           x.created_by, x.created_at
    FROM jsonb_to_recordset(rows->'recurrences') x(id uuid, group_id uuid, template jsonb, unit text, every int, start_date date,
      end_date date, max_count int, next_index int, next_date date, active boolean, created_by uuid, created_at timestamptz);
  END IF;
  IF rows ? 'expenses' THEN
    INSERT INTO expenses (id, group_id, description, amount_minor, date, category, notes, split_method, original_currency,
      original_amount_minor, exchange_rate, created_by, created_at, updated_at, recurrence_id, occurrence_index, import_key,
      category_id, items)
    SELECT x.id, x.group_id, x.description, x.amount_minor, x.date, x.category, x.notes, x.split_method, x.original_currency,
           x.original_amount_minor, x.exchange_rate, x.created_by, x.created_at, x.updated_at, x.recurrence_id, x.occurrence_index, x.import_key,
           coalesce(x.category_id, 'general'), x.items
    FROM jsonb_to_recordset(rows->'expenses') x(id uuid, group_id uuid, description text, amount_minor bigint, date date, category text,
      notes text, split_method text, original_currency text, original_amount_minor bigint, exchange_rate text, created_by uuid,
      created_at timestamptz, updated_at timestamptz, recurrence_id uuid, occurrence_index int, import_key text,
      category_id text, items jsonb);
  END IF;
  IF rows ? 'expense_shares' THEN
    INSERT INTO expense_shares (expense_id, agent_id, paid_minor, owed_minor, split_value)
    SELECT x.expense_id, x.agent_id, x.paid_minor, x.owed_minor, x.split_value
    FROM jsonb_to_recordset(rows->'expense_shares') x(expense_id uuid, agent_id uuid, paid_minor bigint, owed_minor bigint, split_value text);
  END IF;
  IF rows ? 'payments' THEN
    INSERT INTO payments (id, group_id, payer_id, payee_id, amount_minor, note, status, recorded_by, created_at, updated_at, resolved_at)
    SELECT x.id, x.group_id, x.payer_id, x.payee_id, x.amount_minor, x.note, x.status, x.recorded_by, x.created_at, x.updated_at, x.resolved_at
    FROM jsonb_to_recordset(rows->'payments') x(id uuid, group_id uuid, payer_id uuid, payee_id uuid, amount_minor bigint, note text,
      status text, recorded_by uuid, created_at timestamptz, updated_at timestamptz, resolved_at timestamptz);
  END IF;
  -- Activities and inbox items in one statement. The items' foreign-key checks (FOR KEY SHARE on each recipient's
  -- agent row) run at COMMIT (the constraint is INITIALLY DEFERRED, below), after the counters are updated: then each
  -- check locks this transaction's own new agent row version, never one another write is updating (that made the old
  -- version's xmax a MultiXact, which index scans never mark dead).
  IF rows ? 'activities' OR rows ? 'inbox_items' THEN
    WITH activity AS (
      INSERT INTO activities (group_id, actor_id, action, entity_type, entity_id, before, after)
      SELECT x.group_id, x.actor_id, x.action, x.entity_type, x.entity_id, x.before, x.after
      FROM jsonb_to_recordset(coalesce(rows->'activities', '[]'::jsonb)) x(group_id uuid, actor_id uuid, action text,
        entity_type text, entity_id text, before jsonb, after jsonb))
    INSERT INTO inbox_items (id, agent_id, kind, text, requires_action, priority, entity_type, entity_id, group_id)
    SELECT x.id, x.agent_id, x.kind, x.text, x.requires_action, x.priority, x.entity_type, x.entity_id, x.group_id
    FROM jsonb_to_recordset(coalesce(rows->'inbox_items', '[]'::jsonb)) x(id uuid, agent_id uuid, kind text, text text,
      requires_action boolean, priority int, entity_type text, entity_id text, group_id uuid);
  END IF;

  -- The batch's events (kitty_append_events): after the inbox items (an event links the item the change made for each
  -- recipient) and before the member rows are locked, so writes into one group do not wait for each other's events.
  -- Events and their recipients are new rows: they take no lock another write waits for.
  -- One event with its wake-ups sent after COMMIT (kitty_apply_batch_quiet, as the server runs every batch): its
  -- rows in one statement here, as kitty_append_events writes them (a call of that function costs as much again).
  IF b ? 'events' THEN
    IF jsonb_array_length(b->'events') = 1 AND current_setting('kitty.notify_after_commit', true) = 'on' THEN
      WITH e AS (
        INSERT INTO events (id, txid, type, group_id, actor_id, data)
        VALUES (nextval('events_id_seq'), pg_current_xact_id()::text::bigint, b#>>'{events,0,type}', (b#>>'{events,0,group_id}')::uuid,
                (b#>>'{events,0,actor_id}')::uuid, coalesce(nullif(b#>'{events,0,data}', 'null'::jsonb), '{}'::jsonb))
        RETURNING id, txid)
      INSERT INTO event_recipients (agent_id, txid, event_id, inbox_item_id)
      SELECT r.agent_id::uuid, e.txid, e.id, r.item::uuid
      FROM e, ROWS FROM (jsonb_array_elements_text(b#>'{events,0,recipients}'), jsonb_array_elements_text(b#>'{events,0,inbox_items}')) AS r(agent_id, item)
      WHERE r.agent_id IS NOT NULL;
    ELSE
      ignored := kitty_append_events(b->'events')::text;
    END IF;
  END IF;
  -- The caller's inbox summary, read now when this batch cannot change the caller's inbox (no resolved items, no
  -- counter change of the caller's): the same answer, computed before the member rows are locked instead of after.
  IF b ? 'idempotency' AND NOT b ? 'summary_cached' AND NOT b ? 'resolve' THEN
    IF NOT counters @> jsonb_build_array(jsonb_build_object('agent_id', b#>'{idempotency,agent_id}')) THEN
      summary := kitty_inbox_summary((b#>>'{idempotency,agent_id}')::uuid, before_unread, before_open);
      summary_read := true;
    END IF;
  END IF;

  -- Member rows of every balance change, locked in id order before any is updated (an UPDATE ... FROM
  -- join may visit them in physical order, which differs between transactions: a deadlock). One statement locks them,
  -- each by its whole primary key (the sorted ids drive a nested loop of locking probes), and keeps their row
  -- addresses (ctid): the UPDATE below finds them by address, a plan no estimate can turn into a scan of the group's
  -- members. The rows stay locked by this transaction in between, so their addresses cannot change. A member named
  -- without a row is updated by nobody, as before. When the overpayment guard locked exactly the rows this batch
  -- changes (a payment's payer and payee, pending only), its addresses are used as they are.
  IF b ? 'pending' OR b ? 'balances' THEN
    IF member_rows IS NULL OR b ? 'balances' OR jsonb_array_length(b->'pending') <> 2
       OR NOT b->'pending' @> jsonb_build_array(jsonb_build_object('agent_id', guard#>'{max_payment,payer_id}'),
                                                jsonb_build_object('agent_id', guard#>'{max_payment,payee_id}')) THEN
    member_rows := ARRAY(
        SELECT l.ctid FROM (
            SELECT x.agent_id FROM jsonb_to_recordset(coalesce(b->'pending', '[]'::jsonb)) x(agent_id uuid)
            UNION SELECT x.agent_id FROM jsonb_to_recordset(coalesce(b->'balances', '[]'::jsonb)) x(agent_id uuid)
            ORDER BY 1) a,
          LATERAL (SELECT m.ctid FROM memberships m WHERE m.group_id = g AND m.agent_id = a.agent_id FOR NO KEY UPDATE) l);
    END IF;
    -- Pending and settled changes of a member in one UPDATE (one new row version per member, not two).
    UPDATE memberships m SET balance_pending_minor = m.balance_pending_minor + coalesce(d.pending_delta, 0),
      pending_count = m.pending_count + coalesce(d.pending_count, 0),
      balance_minor = m.balance_minor + coalesce(d.balance_delta, 0)
    FROM (SELECT coalesce(p.agent_id, q.agent_id) AS agent_id, p.delta AS pending_delta, p.count AS pending_count, q.delta AS balance_delta
          FROM jsonb_to_recordset(coalesce(b->'pending', '[]'::jsonb)) p(agent_id uuid, delta bigint, count int)
          FULL JOIN jsonb_to_recordset(coalesce(b->'balances', '[]'::jsonb)) q(agent_id uuid, delta bigint) ON q.agent_id = p.agent_id
          ORDER BY 1) d
    WHERE m.ctid = ANY (member_rows) AND m.agent_id = d.agent_id;
  END IF;
  IF b ? 'pairs' THEN
    INSERT INTO pair_debts (group_id, agent_a, agent_b, amount_minor)
    SELECT g, x.a, x.b, x.delta FROM jsonb_to_recordset(b->'pairs') x(a uuid, b uuid, delta bigint) ORDER BY x.a, x.b
    ON CONFLICT (group_id, agent_a, agent_b) DO UPDATE SET amount_minor = pair_debts.amount_minor + excluded.amount_minor;
  END IF;


  -- Inbox items whose action was taken, then every counter change: agent rows last, in id order.
  -- One entity at a time, by equality on the (entity_type, entity_id) index: joined to the recordset, the planner
  -- guessed 100 entities and scanned the whole table (inbox_items is the largest table; measured 8 ms at 30,000 rows).
  IF b ? 'resolve' THEN
    -- The top items of the caller's cached summary (summary_kept): is one of them resolved here?
    IF b ? 'summary_kept' THEN
      kept_top := ARRAY(SELECT x::uuid FROM jsonb_array_elements_text(b#>'{summary_kept,top}') x);
    END IF;
    -- Each entry also names what happened (resolution, e.g. "confirmed by @ana"): the items are marked read and say
    -- so; the unread counter drops by the items that were unread (read in the locked row, not before it).
    -- The entries by index, read in place (a FOR over a query would run one more statement).
    FOR n IN 0 .. jsonb_array_length(b->'resolve') - 1 LOOP
      resolve_type := b->'resolve'->n->>'entity_type';
      resolve_id := b->'resolve'->n->>'entity_id';
      resolve_resolution := b->'resolve'->n->>'resolution';
      resolve_holder := (b->'resolve'->n->>'agent_id')::uuid;
      WITH open AS (
        SELECT i.id, i.read_at IS NULL AS was_unread FROM inbox_items i
        WHERE i.entity_type = resolve_type AND i.entity_id = resolve_id AND (i.requires_action AND i.resolved_at IS NULL) IS TRUE
          AND (resolve_holder IS NULL OR i.agent_id = resolve_holder)
        FOR UPDATE),
      resolved AS (
        UPDATE inbox_items i SET resolved_at = now(), read_at = coalesce(i.read_at, now()), resolution = resolve_resolution
        FROM open o WHERE i.id = o.id
        RETURNING i.id, i.agent_id, o.was_unread)
      SELECT counters || coalesce(jsonb_agg(jsonb_build_object('agent_id', s.agent_id, 'unread', -s.u, 'requires_action', -s.n)), '[]'::jsonb),
             kept_top_resolved OR coalesce(bool_or(s.top), false)
      INTO counters, kept_top_resolved
      FROM (SELECT agent_id, count(*) FILTER (WHERE was_unread) AS u, count(*) AS n, bool_or(id = ANY (kept_top)) AS top
            FROM resolved GROUP BY agent_id) s;
    END LOOP;
  END IF;
  -- Deferred (writes sent together): answered with the rest, applied by kitty_apply_batches_quiet after its last
  -- document, so the agent rows are locked from there to COMMIT only. The caller's own changes are counted for its
  -- summary below, as the agent row does not show them yet.
  IF defer_counters THEN
    IF b ? 'idempotency' AND NOT summary_read AND NOT b ? 'summary_cached' THEN
      SELECT coalesce(sum(x.unread), 0)::int, coalesce(sum(x.requires_action), 0)::int INTO own_unread, own_open
      FROM jsonb_to_recordset(counters) x(agent_id uuid, unread int, requires_action int)
      WHERE x.agent_id = (b#>>'{idempotency,agent_id}')::uuid;
    END IF;
  -- One agent's counters (most writes): one UPDATE by primary key; a single row has no lock order to keep.
  ELSIF jsonb_array_length(counters) = 1 THEN
    UPDATE agents a SET inbox_unread = a.inbox_unread + (counters->0->>'unread')::int,
      inbox_requires_action = a.inbox_requires_action + (counters->0->>'requires_action')::int
    WHERE a.id = (counters->0->>'agent_id')::uuid AND ((counters->0->>'unread')::int <> 0 OR (counters->0->>'requires_action')::int <> 0);
  ELSIF jsonb_array_length(counters) > 1 THEN
    -- Locked and then updated as the member rows above: each by its primary key in id order, then by the addresses
    -- the lock kept (joined to the recordset, the planner once assumed 100 rows and scanned the whole agents table).
    agent_rows := ARRAY(
        SELECT l.ctid FROM (SELECT DISTINCT x.agent_id FROM jsonb_to_recordset(counters) x(agent_id uuid) ORDER BY 1) c,
          LATERAL (SELECT a.ctid FROM agents a WHERE a.id = c.agent_id FOR NO KEY UPDATE) l);
    UPDATE agents a SET inbox_unread = a.inbox_unread + d.u, inbox_requires_action = a.inbox_requires_action + d.r
    FROM (SELECT x.agent_id, sum(x.unread)::int AS u, sum(x.requires_action)::int AS r
          FROM jsonb_to_recordset(counters) x(agent_id uuid, unread int, requires_action int) GROUP BY x.agent_id) d
    WHERE a.ctid = ANY (agent_rows) AND a.id = d.agent_id AND (d.u <> 0 OR d.r <> 0);
  END IF;
  -- The caller's inbox summary as this write leaves it (saves the response a second round trip); or, when the caller's
  -- cached summary (summary_kept) still holds apart from its counts, only the counts (see the top of this migration).
  IF b ? 'idempotency' AND NOT summary_read AND NOT b ? 'summary_cached' THEN
    IF b ? 'summary_kept' AND NOT kept_top_resolved
       AND NOT coalesce(b->'counters', '[]'::jsonb) @> jsonb_build_array(jsonb_build_object('agent_id', b#>'{idempotency,agent_id}')) THEN
      SELECT a.inbox_unread + before_unread + own_unread, a.inbox_requires_action + before_open + own_open
      INTO kept_unread, kept_open FROM agents a
      WHERE a.id = (b#>>'{idempotency,agent_id}')::uuid;
      IF (kept_unread, kept_open) = (
          SELECT (b#>>'{summary_kept,unread}')::int + coalesce(sum(x.unread), 0), (b#>>'{summary_kept,requires_action}')::int + coalesce(sum(x.requires_action), 0)
          FROM jsonb_to_recordset(counters) x(agent_id uuid, unread int, requires_action int)
          WHERE x.agent_id = (b#>>'{idempotency,agent_id}')::uuid) THEN
        RETURN jsonb_build_object('status', 'applied', 'inbox', NULL,
                                  'inbox_kept', jsonb_build_object('unread', kept_unread, 'requires_action', kept_open))
               || CASE WHEN defer_counters THEN jsonb_build_object('counters', counters) ELSE '{}'::jsonb END;
      END IF;
    END IF;
    summary := kitty_inbox_summary((b#>>'{idempotency,agent_id}')::uuid, before_unread + own_unread, before_open + own_open);
  END IF;
  RETURN jsonb_build_object('status', 'applied', 'inbox', summary)
         || CASE WHEN defer_counters THEN jsonb_build_object('counters', counters) ELSE '{}'::jsonb END;
END;
$$;

ALTER FUNCTION kitty_apply_batch(jsonb) SET enable_seqscan = off;

CREATE OR REPLACE FUNCTION kitty_apply_batches_quiet(docs jsonb) RETURNS jsonb LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  group_ids uuid[];
  payment_ids uuid[];
  item_ids uuid[];
  members record;
  answers jsonb := '[]'::jsonb;
  answer jsonb;
  deferred jsonb := '[]'::jsonb;
  agent_rows tid[];
  caller uuid;
  before_unread int;
  before_open int;
  d jsonb;
  ignored text;
BEGIN
  ignored := set_config('kitty.notify_after_commit', 'on', true);
  group_ids := ARRAY(SELECT DISTINCT (e->>'group_id')::uuid FROM jsonb_array_elements(docs) e WHERE e ? 'guard' ORDER BY 1);
  IF cardinality(group_ids) > 0 THEN
    PERFORM 1 FROM groups WHERE id = ANY (group_ids) ORDER BY id FOR SHARE;
  END IF;
  payment_ids := ARRAY(SELECT DISTINCT (e#>>'{guard,payment,id}')::uuid FROM jsonb_array_elements(docs) e
                       WHERE e #> '{guard,payment}' IS NOT NULL ORDER BY 1);
  IF cardinality(payment_ids) > 0 THEN
    PERFORM 1 FROM payments WHERE id = ANY (payment_ids) ORDER BY id FOR NO KEY UPDATE;
  END IF;
  -- By their whole primary key, one group at a time, in id order: the sorted ids drive a nested loop of locking
  -- probes (with "group_id = … AND agent_id = ANY(…)", a plan made without the values reads every member row of a
  -- large group and filters them).
  FOR members IN
    SELECT (e->>'group_id')::uuid AS group_id, array_agg(DISTINCT x.agent_id ORDER BY x.agent_id) AS agent_ids
    FROM jsonb_array_elements(docs) e,
      jsonb_to_recordset(coalesce(e->'pending', '[]'::jsonb) || coalesce(e->'balances', '[]'::jsonb)) x(agent_id uuid)
    GROUP BY 1 ORDER BY 1
  LOOP
    PERFORM 1 FROM unnest(members.agent_ids) a(agent_id),
      LATERAL (SELECT 1 FROM memberships m WHERE m.group_id = members.group_id AND m.agent_id = a.agent_id FOR NO KEY UPDATE) l;
  END LOOP;
  -- The open items each resolve names, by the (entity_type, entity_id) index, one entity at a time: an ARRAY subquery
  -- per entry is evaluated for that entry (a plain LATERAL subquery was pulled up into a join with the recordsets,
  -- estimated at 100 × 100 rows, and planned as a hash join over a scan of the whole inbox_items table).
  item_ids := ARRAY(
    SELECT i.id FROM jsonb_array_elements(docs) e,
      jsonb_to_recordset(coalesce(e->'resolve', '[]'::jsonb)) r(entity_type text, entity_id text, agent_id uuid),
      unnest(ARRAY(SELECT i.id FROM inbox_items i
                   WHERE i.entity_type = r.entity_type AND i.entity_id = r.entity_id AND (i.requires_action AND i.resolved_at IS NULL) IS TRUE
                     AND (r.agent_id IS NULL OR i.agent_id = r.agent_id))) i(id)
    ORDER BY 1);
  IF cardinality(item_ids) > 0 THEN
    PERFORM 1 FROM inbox_items WHERE id = ANY (item_ids) ORDER BY id FOR UPDATE;
  END IF;
  -- The agent rows whose inbox counters change, the last class, are locked after the last document: each document
  -- answers its counter changes (kitty.defer_counters) and they are applied below, summed per agent. One agent is
  -- often a recipient in many groups' writes (the payee of payments in every group they share): locked before the
  -- first document, its row was held for the whole statement, and the instance's statements in flight waited for each
  -- other on it. A document that reads its caller's summary is told what the documents before it changed of the
  -- caller's counters (counters_before), which the agent row does not show yet.
  ignored := set_config('kitty.defer_counters', 'on', true);
  FOR d IN SELECT x FROM jsonb_array_elements(docs) x LOOP
    IF d ? 'idempotency' AND NOT d ? 'summary_cached' AND jsonb_array_length(deferred) > 0 THEN
      caller := (d#>>'{idempotency,agent_id}')::uuid;
      SELECT coalesce(sum(x.unread), 0)::int, coalesce(sum(x.requires_action), 0)::int INTO before_unread, before_open
      FROM jsonb_to_recordset(deferred) x(agent_id uuid, unread int, requires_action int) WHERE x.agent_id = caller;
      IF before_unread <> 0 OR before_open <> 0 THEN
        d := d || jsonb_build_object('counters_before', jsonb_build_object('unread', before_unread, 'requires_action', before_open));
      END IF;
    END IF;
    answer := kitty_apply_batch(d);
    IF answer ? 'counters' THEN
      deferred := deferred || (answer->'counters');
      answer := answer - 'counters';
    END IF;
    answers := answers || jsonb_build_array(answer);
  END LOOP;
  ignored := set_config('kitty.defer_counters', 'off', true);
  -- The deferred counters, summed per agent: locked by primary key in id order, then updated by the addresses the lock
  -- kept (as kitty_apply_batch updates several agents' counters).
  IF jsonb_array_length(deferred) > 0 THEN
    agent_rows := ARRAY(
        SELECT l.ctid FROM (SELECT DISTINCT x.agent_id FROM jsonb_to_recordset(deferred) x(agent_id uuid) ORDER BY 1) c,
          LATERAL (SELECT a.ctid FROM agents a WHERE a.id = c.agent_id FOR NO KEY UPDATE) l);
    UPDATE agents a SET inbox_unread = a.inbox_unread + s.u, inbox_requires_action = a.inbox_requires_action + s.r
    FROM (SELECT x.agent_id, sum(x.unread)::int AS u, sum(x.requires_action)::int AS r
          FROM jsonb_to_recordset(deferred) x(agent_id uuid, unread int, requires_action int) GROUP BY x.agent_id) s
    WHERE a.ctid = ANY (agent_rows) AND a.id = s.agent_id AND (s.u <> 0 OR s.r <> 0);
  END IF;
  RETURN answers;
END;
$$;

ALTER FUNCTION kitty_apply_batches_quiet(jsonb) SET enable_seqscan = off;
