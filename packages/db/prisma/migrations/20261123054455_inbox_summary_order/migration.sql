-- DropIndex
DROP INDEX "inbox_items_agent_id_read_at_idx";

-- DropIndex
DROP INDEX "inbox_items_agent_id_requires_action_resolved_at_idx";

-- CreateIndex
CREATE INDEX "inbox_items_agent_id_read_at_created_at_idx" ON "inbox_items"("agent_id", "read_at", "created_at" DESC);

-- CreateIndex
CREATE INDEX "inbox_items_agent_id_requires_action_resolved_at_priority_c_idx" ON "inbox_items"("agent_id", "requires_action", "resolved_at", "priority", "created_at" DESC);
