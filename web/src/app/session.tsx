import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api, setRequestContext, setUnauthorizedHandler, unwrap } from '../api/client';
import type { SessionInfo, SessionOrganization } from '../api/types';

const ORG_KEY = 'meridian.organizationId';

interface SessionValue {
  /** Undefined while the session is being read; null when signed out. */
  session: SessionInfo | null | undefined;
  organization: SessionOrganization | null;
  signIn(email: string, password: string): Promise<void>;
  signOut(): Promise<void>;
  switchOrganization(id: string): void;
  /** Set when the session ended on its own (expired or revoked) rather than by signing out. */
  endedMessage: string | null;
}

const SessionContext = createContext<SessionValue | null>(null);

function pickOrganization(info: SessionInfo, wanted: string | null): SessionOrganization | null {
  const usable = info.organizations.filter((o) => o.status === 'active');
  return usable.find((o) => o.id === wanted) ?? usable[0] ?? info.organizations[0] ?? null;
}

/** Holds the console session: reads it on load, signs in and out, remembers the chosen organization. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [organizationId, setOrganizationId] = useState<string | null>(() => localStorage.getItem(ORG_KEY));
  const [endedMessage, setEndedMessage] = useState<string | null>(null);

  const organization = session ? pickOrganization(session, organizationId) : null;
  // Set during render, not in an effect: children's effects (their first requests) run before ours.
  setRequestContext({ csrfToken: session?.csrfToken ?? '', organizationId: organization?.id ?? '' });

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setSession((previous) => {
        if (previous) setEndedMessage('Your session has ended. Sign in again to continue.');
        return null;
      });
    });
    api.GET('/api/v1/auth/session').then(
      (result) => setSession(result.data?.data ?? null),
      () => setSession(null),
    );
  }, []);

  const signIn = useCallback(async (email: string, password: string) => {
    const info = unwrap(await api.POST('/api/v1/auth/login', { body: { email, password } })).data;
    setEndedMessage(null);
    setSession(info);
  }, []);

  const signOut = useCallback(async () => {
    await api.POST('/api/v1/auth/logout').catch(() => undefined);
    setEndedMessage(null);
    setSession(null);
  }, []);

  const switchOrganization = useCallback((id: string) => {
    localStorage.setItem(ORG_KEY, id);
    setOrganizationId(id);
  }, []);

  const value = useMemo(
    () => ({ session, organization, signIn, signOut, switchOrganization, endedMessage }),
    [session, organization, signIn, signOut, switchOrganization, endedMessage],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

/** The console session; only inside SessionProvider. */
export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
