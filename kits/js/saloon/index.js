"use strict";
// The "saloon" module a bot may require: the runtime's own pieces for tests and tools.
// Bots need nothing from it: export act(decision) (or a class with act) and return one of
// decision.legal. TypeScript bots import their game's types from "saloon" (index.d.ts).
module.exports = {
  PROTOCOL_VERSION: require("./runtime").PROTOCOL_VERSION,
};
