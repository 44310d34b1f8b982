-- The batched writes' statements never plan a sequential scan while a way to their rows by key exists.
--
-- kitty_apply_batch and kitty_apply_batches_quiet run on generic plans (plan_cache_mode = force_generic_plan), made
-- once per statement and backend and kept until the tables' statistics change. A plan made while a table was small
-- can take a sequential scan where its rows are found by key: the member-row and agent-row updates find their rows by
-- address (ctid = ANY (...)), whose generic estimate is ten addresses, dearer than reading a table of a few pages; the
-- combined writes' group lock (id = ANY (...)) likewise. Once the table has grown, the kept plan reads all of it on
-- every write: found in the one-group bench row (auto_explain), whose pooled backends had made their plans before the
-- create_group rows added ~100,000 memberships: the member-row update read every one of them, 15-30 ms per write
-- with the group's member rows locked, and the row fell to 14-254 writes/s in some runs (its limit 350-900/s).
-- PostgreSQL re-plans when autovacuum re-analyzes a table (by default after 10% of it changed), which bounds the cost
-- on a default server; a server with autovacuum off, or a table grown in bulk, keeps such a plan for good.
--
-- enable_seqscan = off makes a sequential scan the last resort for these functions' statements (and the inbox summary
-- they call, which other callers also run): every one of them reaches its rows by a key or an address, so none needs
-- one. A statement with no other way still runs, on a sequential scan.
--
-- packages/core/test/kernel/plans-made-small.test.ts: backends plan both functions while the tables are small, the
-- tables grow without ANALYZE, and the next call reads no table sequentially.

ALTER FUNCTION kitty_apply_batch(jsonb) SET enable_seqscan = off;
ALTER FUNCTION kitty_apply_batches_quiet(jsonb) SET enable_seqscan = off;
ALTER FUNCTION kitty_inbox_summary(uuid) SET enable_seqscan = off;
