/**
 * The HTTP port is checked before anything else starts (the embedded PostgreSQL's initdb takes seconds and
 * leaves a data folder behind): a port in use or not allowed stops `serve` with one sentence naming the
 * variable to change, as a bad configuration value does, instead of a stack trace after the database is up.
 */
import net from 'node:net';
import { ConfigError } from './config.ts';

/** The sentence for a listen error on `host:port`, or undefined when it is not about the port. */
export function portProblem(err: unknown, host: string, port: number): ConfigError | undefined {
  const code = (err as { code?: string } | null)?.code;
  if (code === 'EADDRINUSE')
    return new ConfigError(
      `PORT=${port}: ${host}:${port} is already in use (another Kitty, or another program). ` +
        `Set PORT to a free port (e.g. PORT=${port + 1} ./kitty, or PORT=0 for any free port), or stop what is listening there.`,
    );
  if (code === 'EACCES')
    return new ConfigError(`PORT=${port}: this user may not listen on ${host}:${port}. Set PORT to a port above 1023 (e.g. PORT=3000).`);
  if (code === 'EADDRNOTAVAIL')
    return new ConfigError(
      `HOST=${host}: this machine has no such address to listen on. Set HOST to one of its addresses (e.g. HOST=127.0.0.1).`,
    );
  return undefined;
}

/**
 * Listens on `host:port` for a moment and lets go.
 * @throws ConfigError when the port cannot be used (port 0, any free port, always can)
 */
export async function checkPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', (e) => reject(portProblem(e, host, port) ?? e));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve()));
  });
}
