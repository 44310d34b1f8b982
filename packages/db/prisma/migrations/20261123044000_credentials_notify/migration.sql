-- Authentication cache invalidation across instances: a change that must end a cached credential
-- notifies the channel "kitty_credentials", delivered on commit to every instance that LISTENs
-- (apps/server credential-notify.ts), which drops it from its caches at once:
--   'agent:<agent id>'  an API key of the agent was revoked (deleted), rotated, re-scoped or given
--                       an expiry, or the agent's handle or display name changed;
--   'grant:<grant id>'  an OAuth connection was revoked or deleted.
-- Writes on the request path (last_used_at, inbox counters) do not notify. Triggers are outside
-- Prisma's schema language, so this migration is written by hand; migration:check ignores them.
CREATE FUNCTION kitty_notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- TG_ARGV[0]: payload kind ('agent' | 'grant'); TG_ARGV[1]: the column holding its id.
  PERFORM pg_notify('kitty_credentials', TG_ARGV[0] || ':' || (to_jsonb(OLD) ->> TG_ARGV[1]));
  RETURN NULL;
END;
$$;

CREATE TRIGGER api_keys_credentials_changed
  AFTER UPDATE OF rotated_at, expires_at, scopes ON api_keys
  FOR EACH ROW
  WHEN (OLD.rotated_at IS DISTINCT FROM NEW.rotated_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at OR OLD.scopes IS DISTINCT FROM NEW.scopes)
  EXECUTE FUNCTION kitty_notify_credentials('agent', 'agent_id');

CREATE TRIGGER api_keys_credentials_deleted
  AFTER DELETE ON api_keys
  FOR EACH ROW
  EXECUTE FUNCTION kitty_notify_credentials('agent', 'agent_id');

CREATE TRIGGER agents_credentials_changed
  AFTER UPDATE OF handle, display_name ON agents
  FOR EACH ROW
  WHEN (OLD.handle IS DISTINCT FROM NEW.handle OR OLD.display_name IS DISTINCT FROM NEW.display_name)
  EXECUTE FUNCTION kitty_notify_credentials('agent', 'id');

CREATE TRIGGER oauth_connections_revoked
  AFTER UPDATE OF revoked_at ON oauth_connections
  FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at)
  EXECUTE FUNCTION kitty_notify_credentials('grant', 'id');

CREATE TRIGGER oauth_connections_deleted
  AFTER DELETE ON oauth_connections
  FOR EACH ROW
  EXECUTE FUNCTION kitty_notify_credentials('grant', 'id');
