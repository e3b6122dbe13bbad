"use strict";
// A gRPC server for the one method a bot serves, on Node's own HTTP/2 (node:http2, nghttp2
// in C++): no gRPC library. gRPC over HTTP/2 is a POST to /package.Service/Method with
// content-type application/grpc; each message in either direction is one byte (1 when
// compressed), its length (4 bytes, big-endian) and its bytes; the server ends with
// trailers carrying grpc-status (0 OK) and grpc-message. What this file does not do, a
// bot's referee does not ask for (no TLS, no metadata, no server-side compression).
//
// Why not @grpc/grpc-js: a bot runs in a new container for a match or a few, so its
// runtime is always cold. grpc-js runs a few thousand lines of JavaScript per message,
// which V8 interprets until they are hot; here a decision is ~100 lines of JavaScript
// around nghttp2 (docs/sandbox.md, table 5).
//
//   serve({ socket | port, method, maxReceive, maxSend, onCall, onListening, onError })
//   onCall(call): call.on("message", buf), call.on("end"), call.on("cancel"),
//                 call.write(buf), call.end(), call.fail(code, message)

const fs = require("fs");

// The gRPC status codes this server sends.
const OK = 0;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;
const UNIMPLEMENTED = 12;
const INTERNAL = 13;

const HEADERS = { ":status": 200, "content-type": "application/grpc" };

// grpc-timeout: digits and a unit (Hours, Minutes, Seconds, milli, micro, nano).
const TIMEOUT_UNIT_MS = { H: 3600e3, M: 60e3, S: 1e3, m: 1, u: 1e-3, n: 1e-6 };

function timeoutMs(value) {
  const m = /^(\d{1,8})([HMSmun])$/.exec(value || "");
  return m ? Number(m[1]) * TIMEOUT_UNIT_MS[m[2]] : null;
}

// grpc-message is percent-encoded (anything outside printable ASCII, and "%").
function percentEncode(text) {
  return Buffer.from(String(text), "utf8")
    .toString("latin1")
    .replace(/[^\x20-\x24\x26-\x7e]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

function frame(message) {
  const out = Buffer.allocUnsafe(5 + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}

// One call (an HTTP/2 stream): its messages in, the server's out, then its status.
class Call {
  constructor(stream, headers, options) {
    this.stream = stream;
    this.maxReceive = options.maxReceive;
    this.maxSend = options.maxSend;
    this.encoding = headers["grpc-encoding"] || "identity";
    this.responded = false;
    this.done = false; // the status is sent (or the stream is gone): nothing more goes out
    this.status = null;
    this.listeners = { message: null, end: null, cancel: null };
    this.pending = []; // received bytes not yet a whole message
    this.pendingBytes = 0;
    this.timer = null;
    stream.on("data", (chunk) => this.receive(chunk));
    stream.on("end", () => {
      if (!this.done && this.listeners.end) this.listeners.end();
    });
    stream.on("wantTrailers", () => {
      const [code, message] = this.status;
      const trailers = { "grpc-status": String(code) };
      if (message) trailers["grpc-message"] = percentEncode(message);
      stream.sendTrailers(trailers);
    });
    stream.on("aborted", () => this.gone());
    stream.on("error", () => this.gone());
    stream.on("close", () => this.gone());
    const ms = timeoutMs(headers["grpc-timeout"]);
    if (ms !== null) {
      this.timer = setTimeout(() => this.fail(DEADLINE_EXCEEDED, "Deadline exceeded"), ms);
      this.timer.unref();
    }
  }

  on(event, listener) {
    this.listeners[event] = listener;
    return this;
  }

  gone() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.done) return;
    this.done = true;
    if (this.listeners.cancel) this.listeners.cancel();
  }

  receive(chunk) {
    if (this.done) return;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (!this.done && this.pendingBytes >= 5) {
      let head = this.pending[0];
      if (head.length < 5) head = this.join();
      const compressed = head[0];
      const length = head.readUInt32BE(1);
      if (length > this.maxReceive) {
        this.fail(RESOURCE_EXHAUSTED, `Received message larger than max (${length} vs. ${this.maxReceive})`);
        return;
      }
      if (this.pendingBytes < 5 + length) return;
      if (head.length < 5 + length) head = this.join();
      let message = head.subarray(5, 5 + length);
      if (head.length === 5 + length) this.pending.shift();
      else this.pending[0] = head.subarray(5 + length);
      this.pendingBytes -= 5 + length;
      if (compressed) {
        message = this.decompress(message);
        if (message === null) return;
      }
      if (this.listeners.message) this.listeners.message(message);
    }
  }

  join() {
    const all = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [all];
    return all;
  }

  decompress(message) {
    const zlib = require("zlib");
    try {
      if (this.encoding === "gzip") return zlib.gunzipSync(message);
      if (this.encoding === "deflate") return zlib.inflateSync(message);
    } catch (err) {
      this.fail(INTERNAL, `Received message could not be decompressed: ${err.message}`);
      return null;
    }
    this.fail(INTERNAL, `Received compressed message but "grpc-encoding" header was ${this.encoding}`);
    return null;
  }

  respond() {
    if (this.responded) return;
    this.responded = true;
    this.stream.respond(HEADERS, { waitForTrailers: true });
  }

  write(message) {
    if (this.done) return;
    if (message.length > this.maxSend) {
      this.fail(RESOURCE_EXHAUSTED, `Sent message larger than max (${message.length} vs. ${this.maxSend})`);
      return;
    }
    this.respond();
    this.stream.write(frame(message));
  }

  // The call's status: OK from end(), an error from fail(); the stream then closes.
  finish(code, message) {
    if (this.done) return;
    this.done = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    if (!this.responded) {
      // Trailers-only: the status in the one HEADERS frame.
      this.responded = true;
      const headers = { ...HEADERS, "grpc-status": String(code) };
      if (message) headers["grpc-message"] = percentEncode(message);
      stream.respond(headers, { endStream: true });
    } else {
      this.status = [code, message];
      stream.end();
    }
    // Whatever the client still sends is read and dropped, so that it is never blocked.
    stream.resume();
  }

  end() {
    this.finish(OK, "");
  }

  fail(code, message) {
    this.finish(code, message);
    if (this.listeners.cancel) this.listeners.cancel();
  }
}

function refuse(stream, status, code, message) {
  const headers = { ":status": status, "content-type": "application/grpc", "grpc-status": String(code) };
  if (message) headers["grpc-message"] = percentEncode(message);
  stream.on("error", () => {});
  stream.respond(headers, { endStream: true });
  stream.resume();
}

function serve(options) {
  // Required here, not at the top: node's start-up snapshot (snapshot.js) cannot hold it.
  const http2 = require("http2");
  const server = http2.createServer({
    // The referee's messages are a few KiB; a larger window lets a large one in at once.
    settings: { initialWindowSize: 1 << 20, maxConcurrentStreams: 100 },
  });
  server.on("session", (session) => {
    session.on("error", () => {});
  });
  server.on("sessionError", () => {});
  server.on("stream", (stream, headers) => {
    const type = headers["content-type"] || "";
    if (headers[":method"] !== "POST" || !type.startsWith("application/grpc")) {
      refuse(stream, 415, UNIMPLEMENTED, `unsupported request ${headers[":method"]} ${type}`);
      return;
    }
    if (headers[":path"] !== options.method) {
      refuse(stream, 200, UNIMPLEMENTED, `unknown method ${headers[":path"]}`);
      return;
    }
    options.onCall(new Call(stream, headers, options));
  });
  server.on("error", options.onError);
  if (options.socket) {
    try {
      fs.unlinkSync(options.socket);
    } catch (_) {
      // not there: nothing to remove
    }
    server.listen(options.socket, () => options.onListening(0));
  } else {
    server.listen(options.port, "127.0.0.1", () => options.onListening(server.address().port));
  }
  return server;
}

module.exports = { serve, Call, OK, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, UNIMPLEMENTED, INTERNAL };
