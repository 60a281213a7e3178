import { useState } from 'react';
import { api, errorText, orgHeader, unwrap } from '../../api/client';
import { ErrorMessage } from '../../components/states';
import type { Connection, ExecutionResult, ObjectSchema, Protocol } from './connections-api';

const TABLES = [
  { type: 'modbus.readHoldingRegisters', label: 'Holding registers (FC03)', bits: false },
  { type: 'modbus.readInputRegisters', label: 'Input registers (FC04)', bits: false },
  { type: 'modbus.readCoils', label: 'Coils (FC01)', bits: true },
  { type: 'modbus.readDiscreteInputs', label: 'Discrete inputs (FC02)', bits: true },
] as const;

const ORDERS: Record<string, string> = {
  ABCD: 'ABCD: big-endian',
  CDAB: 'CDAB: words swapped',
  BADC: 'BADC: bytes swapped in each word',
  DCBA: 'DCBA: little-endian',
};

/** 16-bit registers a value of the type takes. */
const width = (dataType: string) => (dataType === 'float64' ? 4 : dataType.endsWith('16') ? 1 : 2);

/**
 * Picks Modbus registers: table, address, data type, byte and word order, quantity; "Preview" reads
 * them once without saving (`POST .../functions/preview`, read types only, never a write), and the
 * pick becomes one function a value (each into `<topic>/<address>`, block reads merge them) or one
 * function for the whole array, one create each.
 */
export function ModbusRegisterPicker(props: {
  connection: Connection;
  protocol: Protocol;
  onCreated: () => void;
}) {
  const registerSchema = (props.protocol.functionTypes.find((t) => t.type === TABLES[0].type)?.configSchema ??
    {}) as ObjectSchema;
  const dataTypes = (registerSchema.properties?.dataType?.enum ?? ['uint16']) as string[];
  const orders = (registerSchema.properties?.byteOrder?.enum ?? ['ABCD']) as string[];
  const [table, setTable] = useState<string>(TABLES[0].type);
  const [address, setAddress] = useState('0');
  const [quantity, setQuantity] = useState('10');
  const [dataType, setDataType] = useState('uint16');
  const [byteOrder, setByteOrder] = useState('ABCD');
  const [preview, setPreview] = useState<{ result: ExecutionResult; first: number; step: number } | null>(
    null,
  );
  const [topic, setTopic] = useState('');
  const [intervalMs, setIntervalMs] = useState('1000');
  const [split, setSplit] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const bits = TABLES.find((t) => t.type === table)?.bits ?? false;
  const first = Number(address);
  const count = Number(quantity);
  const step = bits ? 1 : width(dataType);

  const config = (at: number, n: number) => ({
    address: at,
    ...(n !== 1 ? { quantity: n } : {}),
    ...(bits ? {} : { dataType, byteOrder }),
  });
  const header = { header: orgHeader(), path: { id: props.connection.id } };

  const read = async () => {
    setError(null);
    setPreview(null);
    try {
      const body = { type: table, config: config(first, count) };
      const result = unwrap(
        await api.POST('/api/v1/connections/{id}/functions/preview', { params: header, body }),
      ).data;
      setPreview({ result, first, step });
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  const create = async () => {
    setError(null);
    setCreated(null);
    try {
      const base = topic.trim().replace(/\/+$/, '');
      const interval = Number(intervalMs);
      const rows = split
        ? Array.from({ length: count }, (_, i) => {
            const at = first + i * step;
            return {
              name: `${base}/${at}`.slice(-100),
              type: table,
              config: config(at, 1),
              uns: { topic: `${base}/${at}`, intervalMs: interval },
            };
          })
        : [
            {
              name: `${base} ${first}+${count}`.slice(-100),
              type: table,
              config: config(first, count),
              uns: { topic: base, intervalMs: interval },
            },
          ];
      // One create a function (an import drops uns targets): stops at the first refusal, saying how far it got.
      let made = 0;
      for (const body of rows) {
        try {
          unwrap(await api.POST('/api/v1/connections/{id}/functions', { params: header, body }));
        } catch (failure) {
          throw new Error(`Created ${made} of ${rows.length}; ${body.name}: ${errorText(failure)}`);
        }
        made++;
      }
      setCreated(`Created ${made} function${made === 1 ? '' : 's'}.`);
      props.onCreated();
    } catch (failure) {
      setError(errorText(failure));
    }
  };

  const result = preview?.result;
  const values = result?.success ? (Array.isArray(result.value) ? result.value : [result.value]) : [];
  const shown = values.map((value, i) => ({ at: (preview?.first ?? 0) + i * (preview?.step ?? 1), value }));
  return (
    <form
      className="register-picker"
      aria-label="Register picker"
      onSubmit={(event) => {
        event.preventDefault();
        void create();
      }}
    >
      <div className="picker-row">
        <div className="field">
          <label htmlFor="picker-table">Table</label>
          <select id="picker-table" value={table} onChange={(e) => setTable(e.target.value)}>
            {TABLES.map((t) => (
              <option key={t.type} value={t.type}>
                {t.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="picker-address">Address</label>
          <input
            id="picker-address"
            type="number"
            min={0}
            max={65535}
            value={address}
            onChange={(e) => setAddress(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="picker-quantity">Quantity</label>
          <input
            id="picker-quantity"
            type="number"
            min={1}
            value={quantity}
            onChange={(e) => setQuantity(e.target.value)}
          />
        </div>
        {!bits && (
          <>
            <div className="field">
              <label htmlFor="picker-data-type">Data type</label>
              <select id="picker-data-type" value={dataType} onChange={(e) => setDataType(e.target.value)}>
                {dataTypes.map((t) => (
                  <option key={t} value={t}>
                    {t} ({width(t)} register{width(t) === 1 ? '' : 's'})
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="picker-order">Byte and word order</label>
              <select id="picker-order" value={byteOrder} onChange={(e) => setByteOrder(e.target.value)}>
                {orders.map((o) => (
                  <option key={o} value={o}>
                    {ORDERS[o] ?? o}
                  </option>
                ))}
              </select>
            </div>
          </>
        )}
      </div>
      <button type="button" className="button" onClick={() => void read()}>
        Preview
      </button>
      <small className="hint"> Reads once from the device; nothing is saved or written.</small>
      {result && !result.success && (
        <p className="state state-error" role="alert">
          Read failed: {result.error}
        </p>
      )}
      {result?.success && (
        <table className="table" aria-label="Preview">
          <thead>
            <tr>
              <th>Address</th>
              <th>Value</th>
            </tr>
          </thead>
          <tbody>
            {shown.map(({ at, value }) => (
              <tr key={at} data-address={at}>
                <td>{at}</td>
                <td>{JSON.stringify(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <fieldset>
        <legend>Create</legend>
        <div className="field">
          <label htmlFor="picker-topic">UNS topic *</label>
          <input
            id="picker-topic"
            value={topic}
            onChange={(e) => setTopic(e.target.value)}
            placeholder="v1/plant/press1"
            required
          />
        </div>
        <div className="field">
          <label htmlFor="picker-interval">Poll interval (ms) *</label>
          <input
            id="picker-interval"
            type="number"
            value={intervalMs}
            onChange={(e) => setIntervalMs(e.target.value)}
            required
          />
        </div>
        <label className="checkbox">
          <input type="checkbox" checked={split} onChange={(e) => setSplit(e.target.checked)} />
          One function a value, each into topic/address (read together in blocks)
        </label>
      </fieldset>
      <ErrorMessage error={error} />
      {created && <p role="status">{created}</p>}
      <button type="submit" className="button button-primary">
        Create functions
      </button>
    </form>
  );
}
