import { lazy, Suspense } from 'react';
import { EmptyState, Loading } from '../components/states';
import { AuditLogPage } from '../pages/admin/audit-log-page';
import { OrganizationPage } from '../pages/admin/organization-page';
import { OrganizationsPage } from '../pages/admin/organizations-page';
import { UsersPage } from '../pages/admin/users-page';
import { ClientDetailPage } from '../pages/clients/client-detail-page';
import { ClientsPage } from '../pages/clients/clients-page';
import { SecurityPage } from '../pages/profile/security-page';
import { SignInPage } from '../pages/sign-in/sign-in-page';
import { Layout } from './layout';
import { lazyPage } from './lazy-page';
import { Link, matchPath, Redirect, useLocation } from './router';
import { useSession } from './session';

// The explorer brings the chart library: load it only when it is opened.
const UnsExplorerPage = lazy(() => import('../pages/uns/uns-explorer-page'));
// Dashboards bring the grid and chart libraries: loaded when opened.
const DashboardsPage = lazy(() => import('../pages/dashboards/dashboards-page'));
const DashboardPage = lazyPage(() => import('../pages/dashboards/dashboard-page'));
// Opened by its address (a bookmark, a kiosk screen): its code loads while the session is checked.
if (matchPath('/dashboards/:id', window.location.pathname)) void DashboardPage.preload();
// Models load when opened, like the explorer: the first load stays small.
const ModelsPage = lazy(() => import('../pages/models/models-page').then((m) => ({ default: m.ModelsPage })));
const ModelDetailPage = lazy(() =>
  import('../pages/models/model-detail-page').then((m) => ({ default: m.ModelDetailPage })),
);
const ConnectionsPage = lazy(() => import('../pages/connections/connections-page'));
const ConnectionDetailPage = lazy(() => import('../pages/connections/connection-detail-page'));
// Pipelines: the editor brings the canvas library (@xyflow/react): loaded when opened.
const PipelinesPage = lazy(() => import('../pages/pipelines/pipelines-page'));
const PipelineEditorPage = lazy(() => import('../pages/pipelines/pipeline-editor-page'));
const ExportPage = lazy(() => import('../pages/dependencies/export-page'));
const ImportPage = lazy(() => import('../pages/dependencies/import-page'));
// The graph brings @xyflow/react and dagre: loaded when opened.
const DependencyGraphPage = lazy(() => import('../pages/dependencies/dependency-graph-page'));

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

function SystemAdminOnly() {
  return <EmptyState title="Only System Administrators manage every organization and user." />;
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
  const model = matchPath('/engine/models/:id', pathname);
  if (pathname === '/engine/models' || model?.id) {
    return (
      <Suspense fallback={<Loading label="Loading models…" />}>
        {model?.id ? <ModelDetailPage id={model.id} /> : <ModelsPage />}
      </Suspense>
    );
  }
  const pipeline = matchPath('/engine/pipelines/:id', pathname);
  if (pathname === '/engine/pipelines' || pipeline?.id) {
    return (
      <Suspense fallback={<Loading label="Loading pipelines…" />}>
        {pipeline?.id ? <PipelineEditorPage id={pipeline.id} /> : <PipelinesPage />}
      </Suspense>
    );
  }
  if (pathname === '/admin/organization') return <OrganizationPage />;
  if (pathname === '/admin/audit-log') return <AuditLogPage />;
  if (pathname === '/admin/organizations') return isAdmin ? <OrganizationsPage /> : <SystemAdminOnly />;
  if (pathname === '/admin/users') return isAdmin ? <UsersPage /> : <SystemAdminOnly />;
  if (pathname === '/uns') {
    return (
      <Suspense fallback={<Loading label="Loading the namespace explorer…" />}>
        <UnsExplorerPage />
      </Suspense>
    );
  }
  if (pathname === '/dashboards') {
    return (
      <Suspense fallback={<Loading label="Loading dashboards…" />}>
        <DashboardsPage />
      </Suspense>
    );
  }
  const dashboard = matchPath('/dashboards/:id', pathname);
  if (dashboard?.id) {
    return (
      <Suspense fallback={<Loading label="Loading the dashboard…" />}>
        <DashboardPage id={dashboard.id} />
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
  if (pathname === '/dependencies/export')
    return (
      <Suspense fallback={<Loading label="Loading…" />}>
        <ExportPage />
      </Suspense>
    );
  if (pathname === '/dependencies/import')
    return (
      <Suspense fallback={<Loading label="Loading…" />}>
        <ImportPage />
      </Suspense>
    );
  if (pathname === '/dependencies') {
    return (
      <Suspense fallback={<Loading label="Loading the dependency graph…" />}>
        <DependencyGraphPage />
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
