"use strict";
// Saloon's bot runtime for JavaScript (and TypeScript compiled to it): serves one bot over
// the bot protocol exactly as the Python runtime (saloon.sdk.run) does. docs/protocol.md is
// the protocol from the bot's side; this file is one implementation of it.
//
//   node run.js BOT_ENTRY --socket PATH
//
// The runtime writes PATH.loading once it is up, then loads the bot (the start clock is the
// bot's from then on), then serves gRPC on the unix socket PATH. Each Bot.Play stream is one
// match with a fresh bot; a kept stream (MatchStart.keep_stream) plays further matches.
// What the bot's own code throws is reported as a BotError, never a broken stream; what it
// prints goes to stderr, marked by the moment of the match it was printed at.

const fs = require("fs");
const path = require("path");
const grpc = require("./grpc");
const wire = require("./wire");

const PROTOCOL_VERSION = 1;
const PLAY_METHOD = "/saloon.v1.Bot/Play";
const MAX_BOT_MESSAGE_BYTES = 64 * 1024;
const MAX_REFEREE_MESSAGE_BYTES = 16 * 1024 * 1024;
// What the referee reads as the reason a bot did not load (the Python runtime's words).
const LOAD_ERROR = "saloon.sdk.run: cannot load the bot: ";
// The start of a mark line on stderr (a record separator, then the moment).
const MARK = "\x1e[saloon] ";

// -- stderr, marked by moment --------------------------------------------------------------
let pendingMoment = null;
let lineStart = true;
let rawStderrWrite = null;

function markedWrite(chunk, encoding, callback) {
  const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
  if (!text) return true;
  if (pendingMoment !== null) {
    rawStderrWrite(`${lineStart ? "" : "\n"}${MARK}${pendingMoment}\n`);
    pendingMoment = null;
  }
  lineStart = text.endsWith("\n");
  return rawStderrWrite(text, typeof encoding === "function" ? undefined : encoding, callback);
}

function mark(moment) {
  pendingMoment = moment;
}

// console.log in a bot is debugging output: stdout is kept free, it goes where stderr goes.
function markOutput() {
  pendingMoment = null;
  lineStart = true;
  rawStderrWrite = process.stderr.write.bind(process.stderr);
  process.stderr.write = markedWrite;
  process.stdout.write = markedWrite;
}

// -- errors, described on one line with the bot's file:line --------------------------------
function whereOf(err) {
  const stack = err && typeof err.stack === "string" ? err.stack : "";
  for (const line of stack.split("\n").slice(1)) {
    const m = /\(?((?:\/|[A-Za-z]:)[^():]+):(\d+):\d+\)?\s*$/.exec(line.trim());
    if (m && !m[1].includes("node_modules") && !m[1].startsWith(__dirname)) {
      return `${m[1]}:${m[2]}`;
    }
  }
  return "";
}

function describe(err, hook) {
  const name = err && err.name ? err.name : "Error";
  const message = err && err.message !== undefined ? err.message : String(err);
  process.stderr.write(`${err && err.stack ? err.stack : `${name}: ${message}`}\n`);
  const place = whereOf(err);
  const at = place ? ` at ${place}` : "";
  return `${hook} raised ${name}: ${message}`.slice(0, 900) + at.slice(0, 100);
}

// -- the bot ---------------------------------------------------------------------------------
function isClass(value) {
  return typeof value === "function" && value.prototype && typeof value.prototype.act === "function";
}

// A factory of fresh bots from a loaded module, in this order (as the Python loader's):
// an exported class with act (module.exports, .Bot or .default), makeBot(), act().
function findBot(mod, where) {
  const candidates = [mod, mod && mod.Bot, mod && mod.default];
  for (const c of candidates) {
    if (isClass(c)) return () => new c();
  }
  if (mod && typeof mod.makeBot === "function") {
    return () => {
      const bot = mod.makeBot();
      if (!bot || typeof bot.act !== "function") {
        throw new Error(`${where}: makeBot() returned no object with act(decision)`);
      }
      return bot;
    };
  }
  const act =
    mod && typeof mod.act === "function"
      ? mod.act
      : typeof mod === "function"
        ? mod
        : mod && mod.default && typeof mod.default.act === "function"
          ? mod.default.act
          : null;
  if (act) return () => ({ act });
  throw new Error(`${where} exports no bot (a class with act(decision), makeBot() or act())`);
}

function loadBot(entry) {
  const resolved = path.resolve(entry);
  let mod;
  try {
    mod = require(resolved);
  } catch (err) {
    const place = err instanceof SyntaxError ? syntaxPlace(err, resolved) : whereOf(err) || resolved;
    const error = new Error(`${place}: ${err && err.name ? err.name : "Error"}: ${err && err.message}`);
    error.cause = err;
    throw error;
  }
  return findBot(mod, resolved);
}

function syntaxPlace(err, file) {
  // Node puts "FILE:LINE" on the first line of a SyntaxError's stack.
  const first = String(err.stack || "").split("\n")[0];
  const m = /^(.*):(\d+)$/.exec(first);
  return m ? `${m[1]}:${m[2]}` : file;
}

// -- matches ------------------------------------------------------------------------------
function sameAction(a, b) {
  if (a === b) return true;
  return JSON.stringify(a) === JSON.stringify(b);
}

class MatchSession {
  constructor(factory, name) {
    this.factory = factory;
    this.name = name;
    this.bot = null;
    this.info = null;
    this.keepStream = false;
  }

  handle(message) {
    if (message.decision) return this.decide(message.decision);
    if (message.start) return this.start(message.start);
    if (message.end) this.end(message.end);
    return null;
  }

  start(start) {
    this.keepStream = start.keepStream;
    let options = {};
    try {
      options = JSON.parse(start.optionsJson || "{}");
    } catch (_) {
      options = {};
    }
    this.info = {
      game: start.game,
      options,
      seat: start.seat,
      numSeats: start.numSeats,
      seed: start.seed,
      decisionMs: start.decisionMs,
      bankMs: start.bankMs,
    };
    mark("start");
    try {
      this.bot = this.factory();
      if (typeof this.bot.onMatchStart === "function") this.bot.onMatchStart(this.info);
    } catch (err) {
      return wire.encodeError(0, wire.EXCEPTION, describe(err, "onMatchStart"));
    }
    return wire.encodeReady(PROTOCOL_VERSION, this.name, this.keepStream);
  }

  decide(request) {
    const index = request.index;
    if (this.bot === null) {
      return wire.encodeError(index, wire.EXCEPTION, "decision request before a successful match start");
    }
    mark(`decision ${index}`);
    let legal;
    let choice;
    try {
      legal = JSON.parse(request.legalJson.toString("utf8"));
      const decision = {
        kind: request.kind,
        // Decoded when the bot first reads it (as the Python runtime types it): a bot
        // that reads only the legal actions does not pay for it.
        get observation() {
          const observation = JSON.parse(request.observationJson.toString("utf8"));
          Object.defineProperty(this, "observation", { value: observation, enumerable: true });
          return observation;
        },
        legal,
        index,
        game: this.info.game,
        seat: this.info.seat,
        clock: { decisionMs: request.decisionMs, bankMs: request.bankMs, startedAt: Date.now() },
        note(text) {
          process.stderr.write(`note: ${text}\n`);
        },
      };
      choice = this.bot.act(decision);
    } catch (err) {
      return wire.encodeError(index, wire.EXCEPTION, describe(err, "act"));
    }
    let action = legal.indexOf(choice);
    if (action < 0) action = legal.findIndex((candidate) => sameAction(candidate, choice));
    if (action < 0) {
      const detail = `${JSON.stringify(choice) ?? String(choice)} is not one of the ${legal.length} legal actions`;
      process.stderr.write(`decision ${index}: ${detail}\n`);
      return wire.encodeError(index, wire.ILLEGAL_CHOICE, detail.slice(0, 1000));
    }
    return wire.encodeDecision(index, action);
  }

  end(end) {
    mark("end");
    if (this.bot === null || typeof this.bot.onMatchEnd !== "function") return;
    try {
      this.bot.onMatchEnd({ seat: this.info.seat, scores: end.scores, ranks: end.ranks });
    } catch (err) {
      describe(err, "onMatchEnd");
    }
  }
}

function play(factory, name) {
  return (call) => {
    let session = new MatchSession(factory, name);
    let closed = false;
    const finish = () => {
      if (!closed) {
        closed = true;
        call.end();
      }
    };
    call.on("message", (buf) => {
      if (closed) return;
      let message;
      try {
        message = wire.decodeToBot(buf);
      } catch (err) {
        closed = true;
        call.fail(grpc.INTERNAL, `cannot decode a ToBot message: ${err.message}`);
        return;
      }
      const reply = session.handle(message);
      if (reply !== null) {
        call.write(reply);
      } else if (message.end) {
        if (!session.keepStream) {
          finish();
          return;
        }
        call.write(wire.encodeEnded());
        session = new MatchSession(factory, name);
      }
    });
    call.on("end", finish);
    call.on("cancel", () => {
      closed = true;
    });
  };
}

function parseArgs(argv) {
  const args = { bot: null, socket: null, port: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--socket") args.socket = argv[++i];
    else if (argv[i] === "--port") args.port = Number(argv[++i]);
    else if (args.bot === null) args.bot = argv[i];
    else throw new Error(`unexpected argument ${argv[i]}`);
  }
  if (!args.bot || (args.socket === null) === (args.port === null)) {
    throw new Error("usage: node run.js BOT --socket PATH | --port N");
  }
  return args;
}

function main(argv) {
  markOutput();
  let args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  if (args.socket) {
    const marker = `${args.socket}.loading`;
    fs.writeFileSync(`${marker}.tmp`, `${process.pid}\n`);
    fs.renameSync(`${marker}.tmp`, marker);
  }
  let factory;
  try {
    factory = loadBot(args.bot);
  } catch (err) {
    process.stderr.write(`${LOAD_ERROR}${err.message}\n`);
    if (err.cause && !(err.cause instanceof SyntaxError) && err.cause.stack) {
      process.stderr.write(`${err.cause.stack}\n`);
    }
    return 2;
  }
  const address = args.socket ? `unix:${path.resolve(args.socket)}` : `127.0.0.1:${args.port}`;
  const server = grpc.serve({
    socket: args.socket ? path.resolve(args.socket) : null,
    port: args.port,
    method: PLAY_METHOD,
    maxReceive: MAX_REFEREE_MESSAGE_BYTES,
    maxSend: MAX_BOT_MESSAGE_BYTES,
    onCall: play(factory, path.basename(args.bot)),
    onListening: (port) => {
      if (args.port !== null) rawStderrWrite(`saloon runtime: serving ${args.bot} on 127.0.0.1:${port}\n`);
    },
    onError: (err) => {
      rawStderrWrite(`saloon runtime: cannot serve on ${address}: ${err.message}\n`);
      process.exit(1);
    },
  });
  const stop = () => {
    server.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  return null;
}

module.exports = { main, play, loadBot, findBot, MatchSession, PROTOCOL_VERSION };
