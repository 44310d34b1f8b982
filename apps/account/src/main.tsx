import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { TRPCProvider, makeClient, isUnauthenticated } from './trpc.ts';
import { App } from './app.tsx';
import './styles.css';

function Root() {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: {
          queries: { retry: (n, e) => !isUnauthenticated(e) && n < 2, refetchOnWindowFocus: true, staleTime: 5_000 },
          mutations: { retry: false },
        },
      }),
  );
  const [trpcClient] = useState(makeClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <App />
      </TRPCProvider>
    </QueryClientProvider>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Root />
  </StrictMode>,
);
