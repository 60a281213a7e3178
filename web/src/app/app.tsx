import { lazy, Suspense } from 'react';
import { EmptyState, Loading } from '../components/states';
import { ClientDetailPage } from '../pages/clients/client-detail-page';
import { ClientsPage } from '../pages/clients/clients-page';
import { SecurityPage } from '../pages/profile/security-page';
import { SignInPage } from '../pages/sign-in/sign-in-page';
import { Layout } from './layout';
import { Link, matchPath, Redirect, useLocation } from './router';
import { useSession } from './session';

// The explorer brings the chart library: load it only when it is opened.
const UnsExplorerPage = lazy(() => import('../pages/uns/uns-explorer-page'));
const ConnectionsPage = lazy(() => import('../pages/connections/connections-page'));
const ConnectionDetailPage = lazy(() => import('../pages/connections/connection-detail-page'));

function NotFound() {
  return (
    <EmptyState title="There is no page here.">
      <Link to="/">Go to the start page</Link>
    </EmptyState>
  );
}

function AdminOnly() {
  return (
    <EmptyState title="Only System Administrators can manage OAuth2 clients.">
      <p>Ask a System Administrator if you need an application registered.</p>
    </EmptyState>
  );
}

function Page() {
  const { session } = useSession();
  const { pathname } = useLocation();
  const isAdmin = session?.user.isSystemAdmin ?? false;
  if (pathname === '/' || pathname === '/sign-in')
    return <Redirect to={isAdmin ? '/oauth2/clients' : '/uns'} />;
  if (pathname === '/oauth2/clients') return isAdmin ? <ClientsPage /> : <AdminOnly />;
  const client = matchPath('/oauth2/clients/:id', pathname);
  if (client?.id) return isAdmin ? <ClientDetailPage id={client.id} /> : <AdminOnly />;
  if (pathname === '/profile' || pathname === '/profile/security') return <SecurityPage />;
  if (pathname === '/uns') {
    return (
      <Suspense fallback={<Loading label="Loading the namespace explorer…" />}>
        <UnsExplorerPage />
      </Suspense>
    );
  }
  if (pathname === '/connections') {
    return (
      <Suspense fallback={<Loading label="Loading connections…" />}>
        <ConnectionsPage />
      </Suspense>
    );
  }
  const connection = matchPath('/connections/:id', pathname);
  if (connection?.id) {
    return (
      <Suspense fallback={<Loading label="Loading the connection…" />}>
        <ConnectionDetailPage id={connection.id} />
      </Suspense>
    );
  }
  return <NotFound />;
}

/** The console: the sign-in page until there is a session, then the page of the current path. */
export function App() {
  const { session, organization } = useSession();
  if (session === undefined) return <Loading label="Opening the console…" />;
  if (session === null) return <SignInPage />;
  return (
    <Layout>
      <div key={organization?.id ?? 'none'}>
        <Page />
      </div>
    </Layout>
  );
}
