-- CreateIndex
CREATE INDEX "inbox_items_agent_id_read_at_idx" ON "inbox_items"("agent_id", "read_at");

-- CreateIndex
CREATE INDEX "inbox_items_agent_id_requires_action_resolved_at_idx" ON "inbox_items"("agent_id", "requires_action", "resolved_at");
