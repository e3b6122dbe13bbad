"use strict";
// node run.js BOT --socket PATH: serve the bot at BOT (its entry file) on the unix socket PATH.
// V8 allocates a function's feedback at its first call, not after ~8 calls' worth of
// bytecode: the runtime lives a match or a few in a new container, and its inline caches
// and baseline code then come that much sooner (docs/sandbox.md, table 5: ~25% less CPU a
// decision in the Docker sandbox).
require("v8").setFlagsFromString("--no-lazy-feedback-allocation");
// In the Node.js image node starts from a snapshot with the runtime already loaded
// (snapshot.js); anywhere else the runtime is required here.
const snapshot = globalThis[Symbol.for("saloon.runtime")];
const runtime =
  snapshot && snapshot.home === __dirname ? snapshot.attach(require) : require("./saloon/runtime");
const code = runtime.main(process.argv.slice(2));
if (code !== null) process.exitCode = code;
