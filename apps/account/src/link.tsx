import type { ReactNode } from 'react';
import { navigate } from './router.ts';

/** An ordinary link (works with a middle click, keyboard and screen readers) that navigates without reloading. */
export function Link({ to, children, current, className }: { to: string; children: ReactNode; current?: boolean; className?: string }) {
  return (
    <a
      href={to}
      className={className}
      aria-current={current ? 'page' : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
