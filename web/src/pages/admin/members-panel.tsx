import { type FormEvent, useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { useAsync } from '../../app/use-async';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage, Loading } from '../../components/states';
import { type Abilities, type Member, ROLES, type Role } from './admin-api';
import { Pager } from './change-list';

const PAGE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Members of an organization and their roles; Admins and Owners manage them, only Owners touch Owners. */
export function MembersPanel({
  organizationId,
  abilities,
}: {
  organizationId: string;
  abilities: Abilities;
}) {
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [who, setWho] = useState('');
  const [role, setRole] = useState<Role>('Viewer');
  const members = useAsync(
    async () =>
      unwrap(
        await api.GET('/api/v1/organizations/{id}/members', {
          params: { header: orgHeader(), path: { id: organizationId }, query: { limit: PAGE, offset } },
        }),
      ),
    [organizationId, offset],
  );

  const put = async (userId: string, next: Role) => {
    const result = await api.PUT('/api/v1/organizations/{id}/members/{userId}', {
      params: { header: orgHeader(), path: { id: organizationId, userId } },
      body: { role: next },
    });
    if (!result.response.ok) unwrap(result);
  };

  const changeRole = (member: Member, next: Role) => {
    setError(null);
    put(member.userId, next).then(members.reload, (failure: unknown) => setError(errorText(failure)));
  };

  /** A user id, or (for System Administrators, who may list users) an email looked up. */
  const resolve = async (text: string): Promise<string> => {
    if (UUID.test(text)) return text;
    if (!abilities.system) throw new Error('Enter the user ID of the person to add.');
    const found = unwrap(
      await api.GET('/api/v1/admin/users', {
        params: { header: orgHeader(), query: { search: text, limit: 10 } },
      }),
    ).data.find((u) => u.email.toLowerCase() === text.toLowerCase());
    if (!found) throw new Error(`No user has the email ${text}.`);
    return found.id;
  };

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await put(await resolve(who.trim()), role);
      setWho('');
      members.reload();
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  return (
    <section className="card" aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <ErrorMessage error={error} />
      <ErrorMessage error={members.error} onRetry={members.reload} />
      {members.loading && !members.data && <Loading label="Loading members…" />}
      {members.data && (
        <>
          <div className="table-wrap">
            <table className="table responsive-table">
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Role</th>
                  <th scope="col">Account</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {members.data.data.map((member) => (
                  <tr key={member.userId} data-member={member.email}>
                    <td data-label="Member">
                      {member.displayName} <small className="muted">{member.email}</small>
                    </td>
                    <td data-label="Role">
                      <select
                        aria-label={`Role of ${member.email}`}
                        value={member.role}
                        onChange={(event) => changeRole(member, event.target.value as Role)}
                      >
                        {ROLES.map((r) => (
                          <option key={r}>{r}</option>
                        ))}
                      </select>
                    </td>
                    <td data-label="Account">{member.userStatus}</td>
                    <td className="cell-actions">
                      <button
                        type="button"
                        className="button button-small"
                        onClick={() => setRemoving(member)}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager offset={offset} limit={PAGE} total={members.data.pagination.total} onOffset={setOffset} />
        </>
      )}
      <form className="inline-add" onSubmit={add}>
        <label className="field">
          <span>{abilities.system ? 'Email or user ID' : 'User ID'}</span>
          <input value={who} onChange={(event) => setWho(event.target.value)} />
        </label>
        <label className="field">
          <span>Role</span>
          <select value={role} onChange={(event) => setRole(event.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r}>{r}</option>
            ))}
          </select>
        </label>
        <button type="submit" className="button" disabled={!who.trim()}>
          Add member
        </button>
      </form>
      <p className="muted">Only Owners give or take away the Owner role; the last Owner stays.</p>
      {removing && (
        <ConfirmDialog
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove member"
          danger
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            const result = await api.DELETE('/api/v1/organizations/{id}/members/{userId}', {
              params: { header: orgHeader(), path: { id: organizationId, userId: removing.userId } },
            });
            if (!result.response.ok) unwrap(result);
            setRemoving(null);
            members.reload();
          }}
        >
          <p>They lose access to this organization at once.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
