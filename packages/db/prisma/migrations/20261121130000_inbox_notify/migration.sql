-- Inbox summary cache invalidation: every change of an agent's inbox counters notifies the
-- channel "kitty_inbox" with the agent id, delivered on commit to every instance that LISTENs
-- (apps/server InboxSummaryCache). Triggers are outside Prisma's schema language, so this
-- migration is written by hand; migration:check ignores functions and triggers.
CREATE FUNCTION kitty_notify_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kitty_inbox', NEW.id::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER agents_inbox_changed
  AFTER UPDATE OF inbox_unread, inbox_requires_action ON agents
  FOR EACH ROW
  WHEN (OLD.inbox_unread IS DISTINCT FROM NEW.inbox_unread OR OLD.inbox_requires_action IS DISTINCT FROM NEW.inbox_requires_action)
  EXECUTE FUNCTION kitty_notify_inbox();
