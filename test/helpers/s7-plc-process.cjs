// A PLC for the S7 tests, in a process of its own (test/helpers/s7-plc.ts): node-snap7's server with
// data block DB1 on the port given. node-snap7 hands its events to JavaScript through libuv async handles
// from its own threads; after its server was stopped and started again in the test process, that
// process's event loop was once found spinning inside uv__async_io for good (the S7 test hung CI). Here
// the PLC goes away by this process being killed, and comes back as a new one.
//   node s7-plc-process.cjs <port> <DB1 as hex>
const { S7Server } = require('node-snap7');

const [port, db1Hex] = process.argv.slice(2);
const server = new S7Server();
server.SetParam(server.LocalPort, Number(port));
server.RegisterArea(server.srvAreaDB, 1, Buffer.from(db1Hex, 'hex'));
if (!server.StartTo('127.0.0.1')) {
  process.send({ error: `the S7 server did not start on port ${port}` });
  process.exit(1);
}
process.on('message', (message) => {
  if (message === 'db1') process.send({ db1: server.GetArea(server.srvAreaDB, 1).toString('hex') });
});
process.send({ ready: true });
