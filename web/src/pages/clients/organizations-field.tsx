import { useEffect, useState } from 'react';
import { api, orgHeader } from '../../api/client';

interface OrganizationOption {
  id: string;
  name: string;
}

/** The organizations a System Administrator can bind a client to (all of them), read once. */
export function useOrganizationOptions(): OrganizationOption[] {
  const [organizations, setOrganizations] = useState<OrganizationOption[]>([]);
  useEffect(() => {
    let current = true;
    api
      .GET('/api/v1/organizations', { params: { header: orgHeader(), query: { limit: 200 } } })
      .then((result) => {
        if (current && result.data) {
          setOrganizations(result.data.data.map((o: OrganizationOption) => ({ id: o.id, name: o.name })));
        }
      })
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, []);
  return organizations;
}

/** An organization's name for display, or its id when it is not among the options. */
export function organizationLabel(id: string, options: readonly OrganizationOption[]): string {
  return options.find((o) => o.id === id)?.name ?? id;
}

/** Picks the organizations a client may act in: its tokens are refused in every other one. */
export function OrganizationsField(props: {
  value: string[];
  onChange: (ids: string[]) => void;
  error?: string | undefined;
}) {
  const options = useOrganizationOptions();
  const unknown = props.value.filter((id) => !options.some((o) => o.id === id));
  const all = [...options, ...unknown.map((id) => ({ id, name: id }))];
  const toggle = (id: string, on: boolean) =>
    props.onChange(on ? [...props.value, id] : props.value.filter((v) => v !== id));
  return (
    <fieldset className="field">
      <legend>Organizations</legend>
      <p className="hint">
        The client acts only in these organizations, whatever its user could reach; within them the user's own
        role applies. Organizations created later are not added.
      </p>
      <div className="scope-grid">
        {all.map((organization) => (
          <label key={organization.id} className="checkbox">
            <input
              type="checkbox"
              name="organization"
              value={organization.id}
              checked={props.value.includes(organization.id)}
              onChange={(event) => toggle(organization.id, event.target.checked)}
            />
            {organization.name}
          </label>
        ))}
      </div>
      {props.error && <p className="field-error">{props.error}</p>}
    </fieldset>
  );
}
