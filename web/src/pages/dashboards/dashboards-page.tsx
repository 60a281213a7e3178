import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { ApiFailure, errorText } from '../../api/client';
import { useSession } from '../../app/session';
import { useAsync } from '../../app/use-async';
import { Dialog } from '../../components/dialog';
import { formatDateTime } from '../../components/format';
import { EmptyState, ErrorMessage, Loading } from '../../components/states';
import {
  cloneDashboard,
  createDashboard,
  createFolder,
  deleteDashboard,
  deleteFolder,
  type Folder,
  listDashboards,
  listFolders,
  patchDashboard,
} from './dashboards-api';
import './dashboards.css';

/** `all`, `root` (outside any folder) or a folder id. */
type Place = string;

function FolderTree(props: {
  folders: Folder[];
  parentId: string | null;
  current: Place;
  onPick: (id: Place) => void;
}) {
  const children = props.folders.filter((f) => f.parentId === props.parentId);
  if (children.length === 0) return null;
  return (
    <ul className="dash-tree">
      {children.map((folder) => (
        <li key={folder.id}>
          <button
            type="button"
            className="dash-tree-item"
            aria-current={props.current === folder.id ? 'true' : undefined}
            onClick={() => props.onPick(folder.id)}
          >
            {folder.name} <span className="muted">{folder.dashboardCount}</span>
          </button>
          <FolderTree {...props} parentId={folder.id} />
        </li>
      ))}
    </ul>
  );
}

function NameDialog(props: {
  title: string;
  label: string;
  onSubmit: (name: string) => Promise<void>;
  onClose: () => void;
}) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await props.onSubmit(name);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <form onSubmit={submit}>
        <label className="field">
          <span>{props.label}</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={100}
            required
            autoFocus
            name="name"
          />
        </label>
        <ErrorMessage error={error} />
        <div className="form-actions">
          <button type="button" className="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary">
            Create
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Dashboards and their folders: browse the tree, search, filter by tag, create, clone, move, delete. */
export default function DashboardsPage() {
  const navigate = useNavigate();
  const { organization } = useSession();
  const canWrite = organization?.role !== 'Viewer';
  const [place, setPlace] = useState<Place>('all');
  const [search, setSearch] = useState('');
  const [tag, setTag] = useState('');
  const [sort, setSort] = useState<'title' | 'updatedAt' | 'createdAt'>('title');
  const [dialog, setDialog] = useState<'folder' | 'dashboard' | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const folders = useAsync(listFolders, []);
  const list = useAsync(
    () =>
      listDashboards({
        ...(place === 'all' ? {} : { folderId: place }),
        search: search.trim(),
        tag: tag.trim(),
        sort,
      }),
    [place, search, tag, sort],
  );
  const folderId = place === 'all' || place === 'root' ? null : place;
  const reload = () => {
    folders.reload();
    list.reload();
  };
  const act = async (action: () => Promise<unknown>) => {
    try {
      await action();
      setActionError(null);
      reload();
    } catch (failure) {
      setActionError(errorText(failure));
    }
  };

  const removeFolder = async (id: string) => {
    try {
      await deleteFolder(id, false);
    } catch (failure) {
      if (!(failure instanceof ApiFailure && failure.status === 409)) throw failure;
      if (!window.confirm(`${failure.message} Delete everything in it?`)) return;
      await deleteFolder(id, true);
    }
    setPlace('all');
  };

  return (
    <div className="dash-browser">
      <aside className="dash-folders" aria-label="Folders">
        <h2>Folders</h2>
        <button
          type="button"
          className="dash-tree-item"
          aria-current={place === 'all' ? 'true' : undefined}
          onClick={() => setPlace('all')}
        >
          All dashboards
        </button>
        <button
          type="button"
          className="dash-tree-item"
          aria-current={place === 'root' ? 'true' : undefined}
          onClick={() => setPlace('root')}
        >
          Not in a folder
        </button>
        {folders.data && (
          <FolderTree folders={folders.data} parentId={null} current={place} onPick={setPlace} />
        )}
        {canWrite && (
          <div className="button-row">
            <button type="button" className="button button-small" onClick={() => setDialog('folder')}>
              New folder{folderId ? ' here' : ''}
            </button>
            {folderId && (
              <button
                type="button"
                className="button button-small button-danger"
                onClick={() => void act(() => removeFolder(folderId))}
              >
                Delete folder
              </button>
            )}
          </div>
        )}
      </aside>
      <section className="dash-list">
        <header className="dash-toolbar">
          <h1 className="dash-title">Dashboards</h1>
          <input
            type="search"
            aria-label="Search dashboards"
            placeholder="Search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <input aria-label="Tag" placeholder="Tag" value={tag} onChange={(e) => setTag(e.target.value)} />
          <select aria-label="Sort by" value={sort} onChange={(e) => setSort(e.target.value as typeof sort)}>
            <option value="title">Title</option>
            <option value="updatedAt">Last changed</option>
            <option value="createdAt">Created</option>
          </select>
          {canWrite && (
            <button type="button" className="button button-primary" onClick={() => setDialog('dashboard')}>
              New dashboard
            </button>
          )}
        </header>
        <ErrorMessage error={actionError ?? list.error} />
        {!list.data ? (
          <Loading />
        ) : list.data.data.length === 0 ? (
          <EmptyState title="No dashboards here yet." />
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Tags</th>
                <th scope="col">Panels</th>
                <th scope="col">Changed</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((d) => (
                <tr key={d.id}>
                  <td>
                    <Link to={`/dashboards/${d.id}`}>{d.title}</Link>
                  </td>
                  <td>{d.tags.join(', ')}</td>
                  <td>{d.panelCount}</td>
                  <td>{formatDateTime(d.updatedAt)}</td>
                  {canWrite && (
                    <td className="button-row">
                      <button
                        type="button"
                        className="button button-small"
                        onClick={() => void act(() => cloneDashboard(d.id))}
                      >
                        Clone
                      </button>
                      <select
                        aria-label={`Move ${d.title}`}
                        value={d.folderId ?? ''}
                        onChange={(e) =>
                          void act(() =>
                            patchDashboard(d.id, { version: d.version, folderId: e.target.value || null }),
                          )
                        }
                      >
                        <option value="">No folder</option>
                        {folders.data?.map((f) => (
                          <option key={f.id} value={f.id}>
                            {f.name}
                          </option>
                        ))}
                      </select>
                      <button
                        type="button"
                        className="button button-small button-danger"
                        onClick={() =>
                          window.confirm(`Delete ${d.title}?`) && void act(() => deleteDashboard(d.id))
                        }
                      >
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {dialog === 'folder' && (
        <NameDialog
          title="New folder"
          label="Folder name"
          onClose={() => setDialog(null)}
          onSubmit={async (name) => {
            await createFolder(name, folderId);
            setDialog(null);
            reload();
          }}
        />
      )}
      {dialog === 'dashboard' && (
        <NameDialog
          title="New dashboard"
          label="Title"
          onClose={() => setDialog(null)}
          onSubmit={async (title) => {
            const created = await createDashboard(title, folderId);
            navigate(`/dashboards/${created.id}`);
          }}
        />
      )}
    </div>
  );
}
