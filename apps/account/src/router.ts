/** The page's few routes live under /account; links use the History API (no full reloads). */
import { useEffect, useState } from 'react';

export type Route =
  | { page: 'overview' }
  | { page: 'agents' }
  | { page: 'agent'; agentId: string }
  | { page: 'apps' }
  | { page: 'webhooks' }
  | { page: 'security' }
  | { page: 'missing' };

function parseRoute(pathname: string): Route {
  const p = pathname.replace(/^\/account/, '').replace(/\/+$/, '');
  if (p === '') return { page: 'overview' };
  if (p === '/agents') return { page: 'agents' };
  const m = /^\/agents\/([0-9a-f-]{36})$/.exec(p);
  if (m) return { page: 'agent', agentId: m[1]! };
  if (p === '/apps') return { page: 'apps' };
  if (p === '/webhooks') return { page: 'webhooks' };
  if (p === '/security') return { page: 'security' };
  return { page: 'missing' };
}

export function navigate(to: string): void {
  window.history.pushState(null, '', to);
  window.dispatchEvent(new PopStateEvent('popstate'));
  window.scrollTo(0, 0);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.pathname));
  useEffect(() => {
    const on = () => setRoute(parseRoute(window.location.pathname));
    window.addEventListener('popstate', on);
    return () => window.removeEventListener('popstate', on);
  }, []);
  return route;
}
