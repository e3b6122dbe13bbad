"use strict";
// The Node.js image's start-up snapshot: node's own start and the runtime's modules,
// loaded and run once, kept in a V8 snapshot that every bot's node starts from.
//
//   node --snapshot-blob runtime.blob --build-snapshot snapshot.js     (the image's build)
//   NODE_OPTIONS="--snapshot-blob /opt/saloon/js/runtime.blob"         (the image's ENV)
//
// Why: Debian's node is built without node's own snapshot and code cache, so without this
// every bot's node compiles its whole start-up and every module from source, in each new
// container (docs/sandbox.md, table 5). run.js takes the runtime from here when it was
// built from its own folder, and requires it as usual otherwise (the process sandbox).
//
// A snapshot's entry may require only node's built-in modules, and not all of them (not
// net or http2: grpc.js requires http2 when it serves). The runtime's files are therefore
// compiled here by hand, as CommonJS modules of their own path (their stack traces name
// their files), and their built-in requires go to run.js's require once it attaches.

const fs = require("fs");
const path = require("path");

const HOME = __dirname;
const modules = new Map();
let outerRequire = require;

function load(name) {
  const known = modules.get(name);
  if (known) return known.exports;
  const file = path.join(HOME, "saloon", `${name}.js`);
  // CommonJS's own wrapper, on the file's first line (its line numbers stay the file's);
  // sourceURL names the file in stack traces. (Not vm: a snapshot does not support it.)
  const source = fs.readFileSync(file, "utf8");
  const compiled = (0, eval)(
    `(function (exports, require, module, __filename, __dirname) {${source}\n})\n//# sourceURL=${file}`,
  );
  const module = { exports: {}, filename: file };
  modules.set(name, module);
  const local = (id) => (id.startsWith("./") ? load(id.slice(2)) : outerRequire(id));
  compiled.call(module.exports, module.exports, local, module, file, path.dirname(file));
  return module.exports;
}

const runtime = load("runtime");
const wire = load("wire");
const grpc = load("grpc");

// -- warm-up: a match played through the runtime's own code, so that V8 has compiled
// what a decision runs before the snapshot is taken (its bytecode is kept in it).
function toBot(field, body) {
  return Buffer.concat([Buffer.from([(field << 3) | 2, body.length]), body]);
}

function message(fields) {
  const parts = [];
  for (const [field, value] of fields) {
    if (typeof value === "number") parts.push(Buffer.from([field << 3, value]));
    else {
      const bytes = Buffer.from(value, "utf8");
      parts.push(Buffer.from([(field << 3) | 2, bytes.length]), bytes);
    }
  }
  return Buffer.concat(parts);
}

function warmUp() {
  const sent = [];
  const stream = {
    handlers: {},
    destroyed: false,
    closed: false,
    on(event, handler) {
      this.handlers[event] = handler;
      return this;
    },
    respond() {},
    write(buf) {
      sent.push(buf);
    },
    end() {},
    resume() {},
  };
  const call = new grpc.Call(stream, { "content-type": "application/grpc" }, {
    maxReceive: 1 << 24,
    maxSend: 1 << 16,
  });
  const bot = { act: (decision) => decision.legal[decision.legal.length - 1] };
  const play = runtime.play(() => bot, "warm-up");
  play(call);
  const frames = [
    toBot(1, message([[1, 1], [2, "m-0"], [3, "seizure-v1"], [4, "{}"], [5, 0], [6, 2], [7, 9], [8, 100], [11, 1]])),
  ];
  for (let i = 1; i < 40; i++) {
    const obs = JSON.stringify({ seat: 0, hand: [i, i + 1], pile: [] });
    const legal = JSON.stringify([{ play: i }, { play: i + 1 }, "pass"]);
    frames.push(toBot(2, message([[1, i], [2, "PLAY_CARD"], [3, obs], [4, legal], [5, 100], [6, 90]])));
  }
  frames.push(toBot(3, Buffer.from([0x0a, 0x10, ...Buffer.alloc(16), 0x12, 0x02, 0x00, 0x01])));
  for (const frame of frames) {
    const head = Buffer.alloc(5);
    head.writeUInt32BE(frame.length, 1);
    stream.handlers.data(Buffer.concat([head, frame]));
  }
  stream.handlers.end();
  if (sent.length < 40 || wire.decodeToBot(frames[1]).decision.index !== 1) {
    throw new Error("snapshot warm-up: the runtime did not answer");
  }
}

warmUp();

globalThis[Symbol.for("saloon.runtime")] = {
  home: HOME,
  // The runtime, its built-in requires from now on through ``require`` (run.js's own).
  attach(require) {
    outerRequire = require;
    return runtime;
  },
};
