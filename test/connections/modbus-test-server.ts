import modbusSerial from 'modbus-serial';

const { ServerTCP } = modbusSerial as unknown as { ServerTCP: typeof import('modbus-serial').ServerTCP };

/** An in-process Modbus TCP device (modbus-serial's ServerTCP) with plain arrays as its memory. */
export class ModbusTestServer {
  readonly holding = new Array<number>(1000).fill(0);
  readonly input = new Array<number>(1000).fill(0);
  readonly coils = new Array<boolean>(1000).fill(false);
  readonly discrete = new Array<boolean>(1000).fill(false);
  /** Requests received (Modbus TCP frames), for counting polls. */
  requests = 0;
  /** The read requests received, in order: function code, first address and how many registers or bits. */
  readonly reads: { fc: number; address: number; length: number }[] = [];
  /** Holding and input register addresses the device refuses with exception 2 (illegal data address). */
  readonly illegal = new Set<number>();
  /** Client sessions opened since start, for counting sessions that come and go. */
  opened = 0;
  /**
   * Awaited when a register write has reached the device, before it is stored and answered: a test
   * holds the write there to look at the world while the device has it.
   */
  onRegisterWrite: ((address: number, value: number) => Promise<void>) | null = null;
  private server: InstanceType<typeof ServerTCP> | null = null;

  /** `host`: the address it listens on (127.0.0.2 for a device the egress tests tell from 127.0.0.1). */
  constructor(
    readonly port: number,
    readonly host = '127.0.0.1',
  ) {}

  async start(): Promise<void> {
    const registers = (memory: number[], addr: number, length: number) => {
      for (let a = addr; a < addr + length; a++) {
        if (this.illegal.has(a))
          throw Object.assign(new Error(`illegal data address ${a}`), { modbusErrorCode: 2 });
      }
      return memory.slice(addr, addr + length).map((v) => v ?? 0);
    };
    const vector = {
      getHoldingRegister: (addr: number) => registers(this.holding, addr, 1)[0]!,
      getMultipleHoldingRegisters: (addr: number, length: number) => registers(this.holding, addr, length),
      getInputRegister: (addr: number) => registers(this.input, addr, 1)[0]!,
      getMultipleInputRegisters: (addr: number, length: number) => registers(this.input, addr, length),
      getCoil: (addr: number) => this.coils[addr] ?? false,
      getDiscreteInput: (addr: number) => this.discrete[addr] ?? false,
      setRegister: (addr: number, value: number) => {
        const held = this.onRegisterWrite?.(addr, value);
        if (!held) {
          this.holding[addr] = value;
          return;
        }
        return held.then(() => {
          this.holding[addr] = value;
        });
      },
      setCoil: (addr: number, value: boolean) => {
        this.coils[addr] = value;
      },
    };
    const server = new ServerTCP(vector, { host: this.host, port: this.port, unitID: 1 });
    await new Promise<void>((resolve, reject) => {
      server.on('initialized', () => resolve());
      server.on('serverError', reject);
    });
    (server as unknown as { _server: import('node:net').Server })._server.on('connection', (socket) => {
      this.opened++;
      let buffered = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        // MBAP header: transaction, protocol, length (of unit id and PDU), unit id; then the PDU.
        while (buffered.length >= 8 && buffered.length >= 6 + buffered.readUInt16BE(4)) {
          const frame = buffered.subarray(0, 6 + buffered.readUInt16BE(4));
          buffered = buffered.subarray(frame.length);
          this.requests++;
          const fc = frame[7]!;
          if (fc >= 1 && fc <= 4 && frame.length >= 12) {
            this.reads.push({ fc, address: frame.readUInt16BE(8), length: frame.readUInt16BE(10) });
          }
        }
      });
    });
    server.on('socketError', () => {});
    server.on('error', () => {});
    this.server = server;
  }

  /** Closes the listener and every open client socket (a device switched off). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const socket of server.socks.keys()) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Open client sessions. */
  sessions(): number {
    return this.server ? this.server.socks.size : 0;
  }
}
