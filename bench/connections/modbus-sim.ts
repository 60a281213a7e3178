// A Modbus TCP server (modbus-serial's ServerTCP) holding a float32 at register 0; prints `listening: {"port":...}`.
import modbusSerial from 'modbus-serial';

const { ServerTCP } = modbusSerial as unknown as { ServerTCP: typeof import('modbus-serial').ServerTCP };
const port = Number(process.argv[2] ?? 15020);
const words = [0x42f6, 0xe979];
const server = new ServerTCP(
  { getHoldingRegister: (addr: number) => words[addr] ?? 0 },
  { host: '127.0.0.1', port, unitID: 1 },
);
server.on('initialized', () => console.log(`listening: ${JSON.stringify({ port })}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
