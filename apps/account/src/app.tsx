import { useEffect, useRef } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTRPC, signInUrl } from './trpc.ts';
import { useRoute, type Route } from './router.ts';
import { Link } from './link.tsx';
import { ErrorNote } from './ui.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { AgentsPage } from './pages/agents.tsx';
import { AgentKeysPage } from './pages/agent-keys.tsx';
import { AppsPage } from './pages/apps.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { SecurityPage } from './pages/security.tsx';

const NAV: Array<{ to: string; label: string; pages: Route['page'][] }> = [
  { to: '/account', label: 'Overview', pages: ['overview'] },
  { to: '/account/agents', label: 'My agents', pages: ['agents', 'agent'] },
  { to: '/account/apps', label: 'Connected apps', pages: ['apps'] },
  { to: '/account/webhooks', label: 'Webhooks', pages: ['webhooks'] },
  { to: '/account/security', label: 'Sign-in & security', pages: ['security'] },
];

const TITLES: Record<Route['page'], string> = {
  overview: 'Overview',
  agents: 'My agents',
  agent: 'Agent keys',
  apps: 'Connected apps',
  webhooks: 'Webhooks',
  security: 'Sign-in & security',
  missing: 'Page not found',
};

export function App() {
  const trpc = useTRPC();
  const route = useRoute();
  const session = useQuery(trpc.session.queryOptions());
  const main = useRef<HTMLElement>(null);

  useEffect(() => {
    document.title = `${TITLES[route.page]} · Kitty account`;
  }, [route.page]);

  const signOut = useMutation({
    mutationFn: async () => {
      const r = await fetch('/auth/signout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (!r.ok && r.status !== 303 && r.status !== 302) throw new Error(`Signing out failed (HTTP ${r.status}). Try again.`);
    },
    onSuccess: () => window.location.assign(signInUrl()),
  });

  if (session.data && !session.data.signed_in) {
    return (
      <main className="center" id="main">
        <h1>Kitty account</h1>
        <p>Sign in to see and control your agents, their keys and the apps connected to them.</p>
        <p>
          <a className="button primary" href={signInUrl()}>
            Sign in
          </a>
        </p>
      </main>
    );
  }

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <div className="brand">Kitty account</div>
        <nav aria-label="Account sections">
          <ul>
            {NAV.map((n) => (
              <li key={n.to}>
                <Link to={n.to} current={n.pages.includes(route.page)}>
                  {n.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          <span className="name">{session.data?.human?.display_name ?? '\u00a0'}</span>
          <button type="button" className="link" onClick={() => signOut.mutate()} disabled={signOut.isPending || !session.data}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <ErrorNote error={signOut.error ?? session.error} />
        {/* The page's own queries start with the session's (one batched request); each page shows its own placeholders. */}
        <Page route={route} />
      </main>
    </>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'agents':
      return <AgentsPage />;
    case 'agent':
      return <AgentKeysPage agentId={route.agentId} />;
    case 'apps':
      return <AppsPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'security':
      return <SecurityPage />;
    default:
      return (
        <>
          <h1>Page not found</h1>
          <p>
            This address is not part of the account page. Go to the <Link to="/account">overview</Link>.
          </p>
        </>
      );
  }
}
