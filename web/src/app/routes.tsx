import type { ComponentType, ReactNode } from 'react';
import { createBrowserRouter, Link, Navigate, Outlet, type RouteObject, useParams } from 'react-router';
import { api, orgHeader, unwrap } from '../api/client';
import { setDisplaySettings } from '../components/format';
import { EmptyState, Loading } from '../components/states';
import { AuditLogPage } from '../pages/admin/audit-log-page';
import { OrganizationPage } from '../pages/admin/organization-page';
import { OrganizationsPage } from '../pages/admin/organizations-page';
import { UsersPage } from '../pages/admin/users-page';
import { ClientDetailPage } from '../pages/clients/client-detail-page';
import { ClientsPage } from '../pages/clients/clients-page';
import { HomePage } from '../pages/home/home-page';
import { SecurityPage } from '../pages/profile/security-page';
import { SignInPage } from '../pages/sign-in/sign-in-page';
import { Layout } from './layout';
import { useSession } from './session';
import { useAsync } from './use-async';

/**
 * A route whose page loads when it is first opened (its module's default export). React Router loads it
 * before it renders the route, so the page never suspends; opened by its address (a bookmark, a kiosk
 * screen), its code loads while the session is checked.
 */
function lazyPage(load: () => Promise<{ default: ComponentType }>): RouteObject['lazy'] {
  return async () => ({ Component: (await load()).default });
}

/** The same for a page of one entity, whose id is the route's `:id` (a new id mounts the page anew). */
function lazyEntityPage(
  load: () => Promise<{ default: ComponentType<{ id: string }> }>,
): RouteObject['lazy'] {
  return async () => {
    const Page = (await load()).default;
    return { Component: () => <EntityPage Page={Page} /> };
  };
}

function EntityPage({ Page }: { Page: ComponentType<{ id: string }> }) {
  const { id = '' } = useParams();
  return <Page key={id} id={id} />;
}

function NotFound() {
  return (
    <EmptyState title="There is no page here.">
      <Link to="/">Go to the start page</Link>
    </EmptyState>
  );
}

/** The console's root: the sign-in page until there is a session, then the frame around the page. */
function Root() {
  const { session, organization } = useSession();
  if (session === undefined) return <Loading label="Opening the console…" />;
  if (session === null) return <SignInPage />;
  return (
    <Layout>
      {/* Another organization mounts every page anew: nothing of the previous one stays on screen. */}
      <div key={organization?.id ?? 'none'}>
        <OrganizationDisplay organizationId={organization?.id ?? null}>
          <Outlet />
        </OrganizationDisplay>
      </div>
    </Layout>
  );
}

/**
 * Reads the organization's time zone, locale and date format before its pages render: every date and
 * number on them follows those (components/format.ts). A member who cannot read them sees the browser's.
 */
function OrganizationDisplay({
  organizationId,
  children,
}: {
  organizationId: string | null;
  children: ReactNode;
}) {
  const settings = useAsync(async () => {
    if (!organizationId) return null;
    const answer = await api.GET('/api/v1/organizations/settings', { params: { header: orgHeader() } });
    return answer.response.ok ? unwrap(answer).data : null;
  }, [organizationId]);
  if (settings.loading && settings.data === undefined) return <Loading label="Opening the organization…" />;
  const data = settings.data ?? null;
  setDisplaySettings(
    data ? { timezone: data.timezone, locale: data.locale, dateFormat: data.dateFormat } : null,
  );
  return children;
}

/** The pages of System Administrators: others see why they cannot open them. */
function SystemAdminOnly({ title, hint }: { title: string; hint?: string }) {
  const { session } = useSession();
  if (session?.user.isSystemAdmin) return <Outlet />;
  return <EmptyState title={title}>{hint && <p>{hint}</p>}</EmptyState>;
}

function ClientDetail() {
  const { id = '' } = useParams();
  return <ClientDetailPage key={id} id={id} />;
}

export const routes: RouteObject[] = [
  {
    path: '/',
    element: <Root />,
    errorElement: <NotFound />,
    children: [
      // Everyone lands on the home page: what runs in the current organization.
      { index: true, element: <HomePage /> },
      { path: 'sign-in', element: <Navigate to="/" replace /> },
      {
        path: 'oauth2/clients',
        element: (
          <SystemAdminOnly
            title="Only System Administrators can manage OAuth2 clients."
            hint="Ask a System Administrator if you need an application registered."
          />
        ),
        children: [
          { index: true, element: <ClientsPage /> },
          { path: ':id', element: <ClientDetail /> },
        ],
      },
      { path: 'profile', element: <SecurityPage /> },
      { path: 'profile/security', element: <SecurityPage /> },
      {
        path: 'engine/models',
        children: [
          { index: true, lazy: lazyPage(() => import('../pages/models/models-page')) },
          { path: ':id', lazy: lazyEntityPage(() => import('../pages/models/model-detail-page')) },
        ],
      },
      {
        path: 'engine/pipelines',
        children: [
          { index: true, lazy: lazyPage(() => import('../pages/pipelines/pipelines-page')) },
          // The editor brings the canvas library (@xyflow/react): loaded when opened.
          { path: ':id', lazy: lazyEntityPage(() => import('../pages/pipelines/pipeline-editor-page')) },
        ],
      },
      {
        path: 'admin',
        children: [
          { path: 'organization', element: <OrganizationPage /> },
          { path: 'audit-log', element: <AuditLogPage /> },
          {
            element: (
              <SystemAdminOnly title="Only System Administrators manage every organization and user." />
            ),
            children: [
              { path: 'organizations', element: <OrganizationsPage /> },
              { path: 'users', element: <UsersPage /> },
            ],
          },
        ],
      },
      // The explorer and the dashboards bring the chart library: loaded when opened.
      { path: 'uns', lazy: lazyPage(() => import('../pages/uns/uns-explorer-page')) },
      {
        path: 'dashboards',
        children: [
          { index: true, lazy: lazyPage(() => import('../pages/dashboards/dashboards-page')) },
          { path: ':id', lazy: lazyEntityPage(() => import('../pages/dashboards/dashboard-page')) },
        ],
      },
      {
        path: 'connections',
        children: [
          { index: true, lazy: lazyPage(() => import('../pages/connections/connections-page')) },
          { path: ':id', lazy: lazyEntityPage(() => import('../pages/connections/connection-detail-page')) },
        ],
      },
      {
        path: 'dependencies',
        children: [
          // The graph brings @xyflow/react and dagre: loaded when opened.
          { index: true, lazy: lazyPage(() => import('../pages/dependencies/dependency-graph-page')) },
          { path: 'export', lazy: lazyPage(() => import('../pages/dependencies/export-page')) },
          { path: 'import', lazy: lazyPage(() => import('../pages/dependencies/import-page')) },
        ],
      },
      { path: '*', element: <NotFound /> },
    ],
  },
];

/** The console's router: the browser's address is the state; pages load when first opened. */
export function createConsoleRouter() {
  return createBrowserRouter(routes);
}
