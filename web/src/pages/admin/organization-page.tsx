import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, orgHeader, unwrap } from '../../api/client';
import { useSession } from '../../app/session';
import { useAsync } from '../../app/use-async';
import { setDisplaySettings } from '../../components/format';
import { ErrorMessage, Loading } from '../../components/states';
import { abilitiesOf, type OrganizationSettings } from './admin-api';
import { ChangeList, Pager } from './change-list';
import { LogoPanel } from './logo-panel';
import { MaintenancePanel } from './maintenance-panel';
import { MembersPanel } from './members-panel';
import { SettingsForm } from './settings-form';
import './admin.css';

const TABS = ['Settings', 'Maintenance', 'Members', 'Logo', 'History'] as const;
type Tab = (typeof TABS)[number];
const HISTORY_PAGE = 20;

function History() {
  const [offset, setOffset] = useState(0);
  const history = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/organizations/settings/history', {
          params: { header: orgHeader(), query: { limit: HISTORY_PAGE, offset } },
        }),
      ),
    [offset],
  );
  return (
    <section className="card" aria-labelledby="history-title">
      <h2 id="history-title">Change history</h2>
      <ErrorMessage error={history.error} onRetry={history.reload} />
      {history.loading && !history.data && <Loading label="Loading the history…" />}
      {history.data && history.data.data.length === 0 && <p className="muted">No changes yet.</p>}
      {history.data && history.data.data.length > 0 && (
        <>
          <ChangeList entries={history.data.data} />
          <Pager
            offset={offset}
            limit={HISTORY_PAGE}
            total={history.data.pagination.total}
            onOffset={setOffset}
          />
        </>
      )}
    </section>
  );
}

/** The current organization: settings, maintenance mode, members, logo and change history. */
export function OrganizationPage() {
  const { session, organization } = useSession();
  const abilities = abilitiesOf(session, organization);
  const [search] = useSearchParams();
  // `?tab=members` (the navigation's Members) opens a tab by its name.
  const [tab, setTab] = useState<Tab>(
    () => TABS.find((t) => t.toLowerCase() === search.get('tab')) ?? 'Settings',
  );
  const [settings, setSettings] = useState<OrganizationSettings | null>(null);
  const loaded = useAsync(async () => {
    const data = unwrap(
      await api.GET('/api/v1/organizations/settings', { params: { header: orgHeader() } }),
    ).data;
    setSettings(data);
    return data;
  }, []);
  if (!organization) return <p className="muted">You are not a member of any organization.</p>;
  const tabs = TABS.filter((t) => t !== 'Members' || abilities.manageMembers);
  return (
    <section className="page" aria-labelledby="org-title">
      <header className="page-header">
        <div>
          <h1 id="org-title">{organization.name}</h1>
          <p className="muted">Your role: {abilities.system ? 'System Administrator' : organization.role}</p>
        </div>
      </header>
      <div className="tabs" role="tablist" aria-label="Organization">
        {tabs.map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            className="tab"
            aria-selected={tab === t}
            onClick={() => setTab(t)}
          >
            {t}
          </button>
        ))}
      </div>
      <div role="tabpanel" className="tab-panel" aria-label={tab}>
        <ErrorMessage error={loaded.error} onRetry={loaded.reload} />
        {!settings && loaded.loading && <Loading label="Loading the settings…" />}
        {settings && tab === 'Settings' && (
          <SettingsForm
            settings={settings}
            canEdit={abilities.manageOrganization}
            onSaved={(saved) => {
              setDisplaySettings({
                timezone: saved.timezone,
                locale: saved.locale,
                dateFormat: saved.dateFormat,
              });
              setSettings(saved);
            }}
            onReload={loaded.reload}
          />
        )}
        {settings && tab === 'Maintenance' && (
          <MaintenancePanel
            state={settings.maintenance}
            canEdit={abilities.manageOrganization}
            onChanged={(maintenance) => {
              setSettings({ ...settings, maintenance });
              loaded.reload();
            }}
          />
        )}
        {tab === 'Members' && <MembersPanel organizationId={organization.id} abilities={abilities} />}
        {tab === 'Logo' && (
          <LogoPanel organizationId={organization.id} canEdit={abilities.manageOrganization} />
        )}
        {tab === 'History' && <History />}
      </div>
    </section>
  );
}
