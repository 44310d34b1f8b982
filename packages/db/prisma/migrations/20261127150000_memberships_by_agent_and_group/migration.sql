-- An agent's memberships by (agent_id, group_id) instead of (agent_id, left_at).
--
-- A write's member rows are found by their whole key (group_id, agent_id): the primary key. With statistics taken
-- while each agent was in about one group, the planner estimated one row for agent_id alone and took the
-- (agent_id, left_at) index for those lookups, then filtered every membership of the agent by group. For an agent in
-- thousands of groups (one that creates a group per task, say) every balance change of its member row read all of
-- them while the group's member rows were locked: 18 ms per write with 16,586 memberships, 98 writes/s into one group
-- instead of 500-800. With group_id in the index, a lookup by the whole key is exact whichever index the planner
-- takes. An agent's own list (agent_id, left_at IS NULL) still starts with agent_id; left_at is a filter on the few
-- groups the agent left.
CREATE INDEX "memberships_agent_id_group_id_idx" ON "memberships"("agent_id", "group_id");
DROP INDEX "memberships_agent_id_left_at_idx";
