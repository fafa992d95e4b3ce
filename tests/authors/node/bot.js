'use strict';
// A bot for the Brag referee, straight on the protocol (docs/bot-protocol.md): it answers the
// handshake, then each decision_request with the first of its legal_actions, and logs the rest.
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const LOAD_OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };
const definition = protoLoader.loadSync(path.join(__dirname, 'proto', 'referee', 'v2', 'bot.proto'), LOAD_OPTIONS);
const referee = grpc.loadPackageDefinition(definition).referee.v2;

function play(call) {
  call.on('data', (request) => {
    switch (request.message) {
      case 'handshake':
        call.write({ handshake: { protocol_versions: [2], games: ['GAME_STOP_THE_BUS', 'GAME_BASTARD_BRAG'],
                                  name: 'node-author', version: '1.0' } });
        break;
      case 'decision_request': {
        const asked = request.decision_request;
        // seat 0 is a seat: with defaults: true it reads 0, not undefined.
        if (typeof asked.seat !== 'number') throw new Error(`no seat in decision ${asked.decision_number}`);
        call.write({ decision: { decision_number: asked.decision_number, action: asked.legal_actions[0] } });
        break;
      }
      case 'game_start':
        console.error(`game ${request.game_start.game_id}: seat ${request.game_start.seat}, seed ${BigInt(request.game_start.random_seed)}`);
        break;
      case 'fault_notice':
        console.error(`fault: ${request.fault_notice.kind}: ${request.fault_notice.detail}`);
        break;
      default:
        break;
    }
  });
  call.on('end', () => call.end());
  call.on('error', (error) => console.error(`stream: ${error.message}`));
}

const address = process.env.REFEREE_BOT_ADDRESS;
const server = new grpc.Server();
server.addService(referee.BotService.service, { Play: play });
server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error) => {
  if (error) {
    console.error(`cannot listen on ${address}: ${error.message}`);
    process.exit(1);
  }
  console.error(`listening on ${address}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.tryShutdown(() => process.exit(0)));
