import { useState } from 'react';
import {
  FIELD_TYPES,
  type FieldShape,
  type FieldType,
  type ModelField,
  type ModelListItem,
} from './models-api';

const TYPE_LABELS: Record<FieldType, string> = {
  number: 'Number',
  integer: 'Integer',
  boolean: 'Boolean',
  string: 'Text',
  datetime: 'Date and time',
  enum: 'One of a list',
  object: 'Object (nested fields)',
  array: 'List',
  model: 'Another model',
  any: 'Any value',
};

/** A number input that holds `undefined` while empty. */
function NumberInput(props: {
  label: string;
  value: number | undefined;
  onChange: (v: number | undefined) => void;
}) {
  return (
    <label className="field field-inline">
      <span>{props.label}</span>
      <input
        type="number"
        step="any"
        value={props.value ?? ''}
        onChange={(e) => props.onChange(e.target.value === '' ? undefined : Number(e.target.value))}
      />
    </label>
  );
}

/** A default value typed as JSON (`12`, `"on"`, `{"a":1}`); text that is not JSON is taken as a string. */
function DefaultInput({ value, onChange }: { value: unknown; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(value === undefined ? '' : JSON.stringify(value));
  return (
    <label className="field field-inline">
      <span>Default</span>
      <input
        value={text}
        placeholder="none"
        onChange={(e) => setText(e.target.value)}
        onBlur={() => {
          if (text.trim() === '') return onChange(undefined);
          try {
            onChange(JSON.parse(text));
          } catch {
            onChange(text);
          }
        }}
      />
    </label>
  );
}

/** Removes empty members so the saved field carries only what was set. */
function clean<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined || member === '') continue;
    if (
      key === 'constraints' &&
      typeof member === 'object' &&
      Object.keys(clean(member as object)).length === 0
    )
      continue;
    out[key] = key === 'constraints' ? clean(member as object) : member;
  }
  return out as T;
}

/** What a type brings along when chosen: nested fields for an object, items for a list, and so on. */
function retype<T extends FieldShape>(shape: T, type: FieldType): T {
  const { fields: _f, items: _i, enum: _e, model: _m, constraints: _c, ...rest } = shape;
  const next = { ...rest, type } as T;
  if (type === 'object') next.fields = shape.fields ?? [];
  if (type === 'array') next.items = shape.items ?? { type: 'number' };
  if (type === 'enum') next.enum = shape.enum ?? [];
  if (type === 'model') next.model = shape.model ?? { id: '' };
  if ((type === 'number' || type === 'integer') && shape.constraints)
    next.constraints = clean({ min: shape.constraints.min, max: shape.constraints.max });
  if (type === 'string' && shape.constraints)
    next.constraints = clean({ maxLength: shape.constraints.maxLength, pattern: shape.constraints.pattern });
  return next;
}

/** The type-specific part of a field or of a list's items: constraints, enum values, reference, nested fields. */
function ShapeEditor<T extends FieldShape>(props: {
  shape: T;
  onChange: (shape: T) => void;
  models: ModelListItem[];
  selfId: string;
  path: string;
  depth: number;
}) {
  const { shape, onChange } = props;
  const c = shape.constraints ?? {};
  const setConstraint = (key: 'min' | 'max' | 'maxLength' | 'pattern', value: number | string | undefined) =>
    onChange(clean({ ...shape, constraints: { ...c, [key]: value } }));
  return (
    <>
      {(shape.type === 'number' || shape.type === 'integer') && (
        <div className="field-row">
          <NumberInput label="Min" value={c.min} onChange={(v) => setConstraint('min', v)} />
          <NumberInput label="Max" value={c.max} onChange={(v) => setConstraint('max', v)} />
        </div>
      )}
      {shape.type === 'string' && (
        <div className="field-row">
          <NumberInput
            label="Max length"
            value={c.maxLength}
            onChange={(v) => setConstraint('maxLength', v)}
          />
          <label className="field field-inline">
            <span>Pattern</span>
            <input
              value={c.pattern ?? ''}
              placeholder="e.g. ^[A-Z]{2}[0-9]+$"
              onChange={(e) => setConstraint('pattern', e.target.value || undefined)}
            />
          </label>
        </div>
      )}
      {shape.type === 'enum' && (
        <label className="field">
          <span>Values (comma-separated)</span>
          <input
            defaultValue={(shape.enum ?? []).join(', ')}
            onBlur={(e) =>
              onChange({
                ...shape,
                enum: e.target.value
                  .split(',')
                  .map((v) => v.trim())
                  .filter(Boolean),
              })
            }
          />
        </label>
      )}
      {shape.type === 'model' && (
        <div className="field-row">
          <label className="field field-inline">
            <span>Model</span>
            <select
              aria-label="Model"
              value={shape.model?.id ?? ''}
              onChange={(e) =>
                onChange({ ...shape, model: clean({ id: e.target.value, version: shape.model?.version }) })
              }
            >
              <option value="">Choose a model</option>
              {props.models
                .filter((m) => m.id !== props.selfId)
                .map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                  </option>
                ))}
            </select>
          </label>
          <NumberInput
            label="Pinned version"
            value={shape.model?.version}
            onChange={(v) => onChange({ ...shape, model: clean({ id: shape.model?.id ?? '', version: v }) })}
          />
        </div>
      )}
      {shape.type === 'array' && shape.items && (
        <fieldset className="items-editor">
          <legend>List items</legend>
          <label className="field field-inline">
            <span>Item type</span>
            <select
              aria-label="Item type"
              value={shape.items.type}
              onChange={(e) =>
                onChange({ ...shape, items: retype(shape.items!, e.target.value as FieldType) })
              }
            >
              {FIELD_TYPES.map((t) => (
                <option key={t} value={t}>
                  {TYPE_LABELS[t]}
                </option>
              ))}
            </select>
          </label>
          <ShapeEditor
            {...props}
            shape={shape.items}
            path={`${props.path}/items`}
            depth={props.depth + 1}
            onChange={(items) => onChange({ ...shape, items })}
          />
        </fieldset>
      )}
      {shape.type === 'object' && (
        <FieldList
          fields={shape.fields ?? []}
          onChange={(fields) => onChange({ ...shape, fields })}
          models={props.models}
          selfId={props.selfId}
          path={props.path}
          depth={props.depth + 1}
        />
      )}
    </>
  );
}

function FieldEditor(props: {
  field: ModelField;
  onChange: (field: ModelField) => void;
  onRemove: () => void;
  models: ModelListItem[];
  selfId: string;
  path: string;
  depth: number;
}) {
  const { field, onChange } = props;
  const hasUnit = field.type === 'number' || field.type === 'integer' || field.type === 'any';
  return (
    <fieldset className="field-card" data-field-path={props.path}>
      <legend className="visually-hidden">Field {props.path}</legend>
      <div className="field-row">
        <label className="field field-inline">
          <span>Name</span>
          <input
            value={field.name}
            onChange={(e) => onChange({ ...field, name: e.target.value })}
            maxLength={128}
          />
        </label>
        <label className="field field-inline">
          <span>Type</span>
          <select
            aria-label="Type"
            value={field.type}
            onChange={(e) => onChange(retype(field, e.target.value as FieldType))}
          >
            {FIELD_TYPES.map((t) => (
              <option key={t} value={t}>
                {TYPE_LABELS[t]}
              </option>
            ))}
          </select>
        </label>
        {hasUnit && (
          <label className="field field-inline">
            <span>Unit</span>
            <input
              value={field.unit ?? ''}
              size={6}
              maxLength={32}
              onChange={(e) => onChange(clean({ ...field, unit: e.target.value }))}
            />
          </label>
        )}
        <label className="checkbox">
          <input
            type="checkbox"
            checked={field.required ?? false}
            onChange={(e) => onChange(clean({ ...field, required: e.target.checked || undefined }))}
          />
          <span>Required</span>
        </label>
        <button type="button" className="button button-small button-danger" onClick={props.onRemove}>
          Remove
        </button>
      </div>
      <ShapeEditor {...props} shape={field} onChange={onChange} />
      <div className="field-row">
        {field.type !== 'object' && field.type !== 'model' && (
          <DefaultInput value={field.default} onChange={(v) => onChange(clean({ ...field, default: v }))} />
        )}
        <NumberInput
          label="Stale after (s)"
          value={field.staleAfterSeconds}
          onChange={(v) => onChange(clean({ ...field, staleAfterSeconds: v }))}
        />
        <label className="field field-inline field-grow">
          <span>Description</span>
          <input
            value={field.description ?? ''}
            onChange={(e) => onChange(clean({ ...field, description: e.target.value }))}
          />
        </label>
      </div>
    </fieldset>
  );
}

/** Edits a list of fields; objects nest another list, to any depth the model allows. */
export function FieldList(props: {
  fields: ModelField[];
  onChange: (fields: ModelField[]) => void;
  models: ModelListItem[];
  selfId: string;
  path?: string;
  depth?: number;
}) {
  const path = props.path ?? '';
  const depth = props.depth ?? 0;
  const replace = (i: number, field: ModelField) =>
    props.onChange(props.fields.map((f, j) => (j === i ? field : f)));
  return (
    <div className={depth > 0 ? 'field-list nested' : 'field-list'}>
      {props.fields.map((field, i) => (
        <FieldEditor
          // biome-ignore lint/suspicious/noArrayIndexKey: fields are edited in place; names change while typing.
          key={i}
          field={field}
          onChange={(f) => replace(i, f)}
          onRemove={() => props.onChange(props.fields.filter((_, j) => j !== i))}
          models={props.models}
          selfId={props.selfId}
          path={`${path}/${field.name || `#${i + 1}`}`}
          depth={depth}
        />
      ))}
      <button
        type="button"
        className="button button-small"
        onClick={() => props.onChange([...props.fields, { name: '', type: 'number' }])}
      >
        {depth > 0 ? 'Add nested field' : 'Add field'}
      </button>
    </div>
  );
}
