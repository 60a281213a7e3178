// A Modbus TCP server (modbus-serial's ServerTCP) with N holding registers, register a holding a;
// it counts the read requests for them and shows the count as a uint32 at registers 60000-60001 (read
// requests for those are not counted). Prints `listening: {"port":...}`.
import modbusSerial from 'modbus-serial';

const { ServerTCP } = modbusSerial as unknown as { ServerTCP: typeof import('modbus-serial').ServerTCP };
const count = Number(process.argv[2] ?? 1000);
const port = Number(process.argv[3] ?? 15021);
const COUNTER = 60000;
let requests = 0;
const register = (addr: number) => {
  if (addr === COUNTER) return Math.floor(requests / 65536);
  if (addr === COUNTER + 1) return requests % 65536;
  if (addr >= count) throw Object.assign(new Error('illegal data address'), { modbusErrorCode: 2 });
  return addr;
};
const server = new ServerTCP(
  {
    // A one-register request arrives here, a longer one below: one call a request.
    getHoldingRegister: (addr: number) => {
      if (addr < COUNTER) requests++;
      return register(addr);
    },
    getMultipleHoldingRegisters: (addr: number, length: number) => {
      if (addr < COUNTER) requests++;
      return Array.from({ length }, (_, i) => register(addr + i));
    },
  },
  { host: '127.0.0.1', port, unitID: 1 },
);
server.on('initialized', () => console.log(`listening: ${JSON.stringify({ port })}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
