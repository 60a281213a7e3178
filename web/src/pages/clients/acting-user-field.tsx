import { useDeferredValue, useState } from 'react';
import { useUsers } from './use-directory';

/** Picks the user a client-credentials client acts as; empty means its creator. */
export function ActingUserField(props: { value: string; onChange: (id: string) => void }) {
  const [search, setSearch] = useState('');
  const { users, byId } = useUsers(useDeferredValue(search));
  const selected = props.value ? byId.get(props.value) : undefined;
  const options = selected && !users.includes(selected) ? [selected, ...users] : users;
  return (
    <fieldset className="field">
      <legend>Acting user</legend>
      <p className="hint">
        Client credentials tokens act as this user, with their roles. Leave empty to act as the user who
        registered the client.
      </p>
      <div className="acting-user">
        <label>
          <span className="visually-hidden">Search users</span>
          <input
            type="search"
            placeholder="Search users by name or email"
            value={search}
            onChange={(event) => setSearch(event.target.value)}
          />
        </label>
        <label>
          <span className="visually-hidden">Acting user</span>
          <select value={props.value} onChange={(event) => props.onChange(event.target.value)}>
            <option value="">The user who registered it</option>
            {!selected && props.value && <option value={props.value}>{props.value}</option>}
            {options.map((user) => (
              <option key={user.id} value={user.id}>
                {user.displayName} ({user.email})
              </option>
            ))}
          </select>
        </label>
      </div>
    </fieldset>
  );
}
