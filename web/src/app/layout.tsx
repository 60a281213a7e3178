import type { ReactNode } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { abilitiesOf } from '../pages/admin/admin-api';
import { MaintenanceBanner, useMaintenance } from '../pages/admin/maintenance-banner';
import { OrganizationLogo } from '../pages/admin/organization-logo';
import { useSession } from './session';

/** The navigation's links to a tab of a page. */
const QUERY_LINKS = new Set(['/admin/organization?tab=members']);

/**
 * A navigation link, marked as the current page (aria-current) on its path and the paths under it; a
 * link with a query (a tab of a page) only with that query, and the page's own link then not.
 */
function NavLink({ to, children }: { to: string; children: ReactNode }) {
  const location = useLocation();
  const [path, query] = to.split('?');
  const onPath = location.pathname === path || location.pathname.startsWith(`${path}/`);
  const current = query
    ? onPath && location.search === `?${query}`
    : onPath && !QUERY_LINKS.has(location.pathname + location.search);
  return (
    <Link to={to} className="nav-link" aria-current={current ? 'page' : undefined}>
      {children}
    </Link>
  );
}

/** A labelled group of the main navigation (engineering, administration, system). */
function NavGroup({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="nav-group" data-group={label}>
      <span className="nav-group-label">{label}</span>
      <div className="nav-group-links">{children}</div>
    </div>
  );
}

/** The organization switcher: its choice becomes the X-Organization-ID of every request. */
function OrganizationSwitcher() {
  const { session, organization, switchOrganization } = useSession();
  if (!session) return null;
  if (session.organizations.length === 0) return <span className="muted">No organization</span>;
  return (
    <label className="org-switcher">
      <span className="visually-hidden">Organization</span>
      <select value={organization?.id ?? ''} onChange={(event) => switchOrganization(event.target.value)}>
        {session.organizations.map((org) => (
          <option key={org.id} value={org.id} disabled={org.status !== 'active'}>
            {org.name}
            {org.status !== 'active' ? ' (suspended)' : ''}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The console frame: header with navigation, organization switcher and account, then the page. */
export function Layout({ children }: { children: ReactNode }) {
  const { session, organization, signOut } = useSession();
  const isAdmin = session?.user.isSystemAdmin ?? false;
  const abilities = abilitiesOf(session, organization);
  const maintenance = useMaintenance(organization?.id ?? null);
  const navigate = useNavigate();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <OrganizationLogo organizationId={organization?.id ?? null} />
        <Link to="/" className="brand">
          Meridian
        </Link>
        <nav aria-label="Main" className="nav">
          <NavGroup label="Engineering">
            <NavLink to="/uns">Namespace</NavLink>
            <NavLink to="/connections">Connections</NavLink>
            <NavLink to="/engine/models">Models</NavLink>
            <NavLink to="/engine/pipelines">Pipelines</NavLink>
            <NavLink to="/dashboards">Dashboards</NavLink>
          </NavGroup>
          <NavGroup label="Administration">
            {organization && <NavLink to="/admin/organization">Organization</NavLink>}
            {organization && abilities.manageMembers && (
              <NavLink to="/admin/organization?tab=members">Members</NavLink>
            )}
            {abilities.manageMembers && <NavLink to="/admin/audit-log">Audit log</NavLink>}
            <NavLink to="/dependencies">Dependencies</NavLink>
          </NavGroup>
          {isAdmin && (
            <NavGroup label="System">
              <NavLink to="/admin/organizations">Organizations</NavLink>
              <NavLink to="/admin/users">Users</NavLink>
              <NavLink to="/oauth2/clients">OAuth2 clients</NavLink>
            </NavGroup>
          )}
        </nav>
        <div className="topbar-end">
          {/* The API reference is served by the server, not the console: a plain link. */}
          <a className="api-reference-link" href="/api/docs" target="_blank" rel="noreferrer">
            API reference
          </a>
          <NavLink to="/profile/security">Profile</NavLink>
          <OrganizationSwitcher />
          <span className="user" title={session?.user.email}>
            {session?.user.displayName}
            {organization && <small>{organization.role}</small>}
          </span>
          <button
            type="button"
            className="button button-small"
            onClick={() => signOut().then(() => navigate('/sign-in'))}
          >
            Sign out
          </button>
        </div>
      </header>
      <MaintenanceBanner state={maintenance} />
      <main id="main" className="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
