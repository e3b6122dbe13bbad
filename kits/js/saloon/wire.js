"use strict";
// The bot protocol's messages (proto/saloon/v1/bot.proto) in protobuf's wire format, by
// hand: the runtime then needs no .proto file and no protobuf library at start-up. Only
// the fields of package saloon.v1 that a bot reads or writes are known; every other field
// is skipped, as protobuf's own decoders do, so a newer referee's additions are ignored.

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

class Reader {
  constructor(buf) {
    this.buf = buf;
    this.pos = 0;
  }
  done() {
    return this.pos >= this.buf.length;
  }
  varint() {
    // As a BigInt: uint64 fields (the seed) need all 64 bits.
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error("truncated varint");
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error("varint too long");
    }
  }
  uint() {
    return Number(this.varint() & 0xffffffffn);
  }
  bytes() {
    const n = this.uint();
    if (this.pos + n > this.buf.length) throw new Error("truncated field");
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire) {
    if (wire === VARINT) this.varint();
    else if (wire === FIXED64) this.pos += 8;
    else if (wire === BYTES) this.bytes();
    else if (wire === FIXED32) this.pos += 4;
    else throw new Error(`unknown wire type ${wire}`);
  }
  // Each (field number, wire type) of a message, in order.
  *fields() {
    while (!this.done()) {
      const key = this.uint();
      yield [key >>> 3, key & 7];
    }
  }
}

function decodeStart(buf) {
  const r = new Reader(buf);
  const m = {
    protocolVersion: 0, matchId: "", game: "", optionsJson: "", seat: 0, numSeats: 0,
    seed: 0n, decisionMs: 0, bankMs: 0, startMs: 0, keepStream: false,
  };
  for (const [field, wire] of r.fields()) {
    if (wire === VARINT) {
      const v = r.varint();
      if (field === 1) m.protocolVersion = Number(v);
      else if (field === 5) m.seat = Number(v);
      else if (field === 6) m.numSeats = Number(v);
      else if (field === 7) m.seed = v;
      else if (field === 8) m.decisionMs = Number(v);
      else if (field === 9) m.bankMs = Number(v);
      else if (field === 10) m.startMs = Number(v);
      else if (field === 11) m.keepStream = v !== 0n;
    } else if (wire === BYTES && field >= 2 && field <= 4) {
      const s = r.bytes().toString("utf8");
      if (field === 2) m.matchId = s;
      else if (field === 3) m.game = s;
      else m.optionsJson = s;
    } else r.skip(wire);
  }
  return m;
}

function decodeDecision(buf) {
  const r = new Reader(buf);
  const m = { index: 0, kind: "", observationJson: null, legalJson: null, decisionMs: 0, bankMs: 0 };
  for (const [field, wire] of r.fields()) {
    if (wire === VARINT) {
      const v = r.uint();
      if (field === 1) m.index = v;
      else if (field === 5) m.decisionMs = v;
      else if (field === 6) m.bankMs = v;
    } else if (wire === BYTES && field >= 2 && field <= 4) {
      const b = r.bytes();
      if (field === 2) m.kind = b.toString("utf8");
      else if (field === 3) m.observationJson = b;
      else m.legalJson = b;
    } else r.skip(wire);
  }
  return m;
}

function decodeEnd(buf) {
  const r = new Reader(buf);
  const m = { scores: [], ranks: [] };
  for (const [field, wire] of r.fields()) {
    if (field === 1 && wire === BYTES) {
      const b = r.bytes();
      for (let i = 0; i + 8 <= b.length; i += 8) m.scores.push(b.readDoubleLE(i));
    } else if (field === 1 && wire === FIXED64) {
      m.scores.push(r.buf.readDoubleLE(r.pos));
      r.pos += 8;
    } else if (field === 2 && wire === BYTES) {
      const inner = new Reader(r.bytes());
      while (!inner.done()) m.ranks.push(inner.uint());
    } else if (field === 2 && wire === VARINT) {
      m.ranks.push(r.uint());
    } else r.skip(wire);
  }
  return m;
}

// ToBot: {start} | {decision} | {end} (or {} for a message this runtime does not know).
function decodeToBot(buf) {
  const r = new Reader(buf);
  let out = {};
  for (const [field, wire] of r.fields()) {
    if (wire !== BYTES) {
      r.skip(wire);
      continue;
    }
    const body = r.bytes();
    if (field === 1) out = { start: decodeStart(body) };
    else if (field === 2) out = { decision: decodeDecision(body) };
    else if (field === 3) out = { end: decodeEnd(body) };
  }
  return out;
}

class Writer {
  constructor() {
    this.parts = [];
  }
  varint(value) {
    let v = BigInt(value);
    const bytes = [];
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) b |= 0x80;
      bytes.push(b);
    } while (v !== 0n);
    this.parts.push(Buffer.from(bytes));
  }
  key(field, wire) {
    this.varint((field << 3) | wire);
  }
  uint(field, value) {
    if (value) {
      this.key(field, VARINT);
      this.varint(value);
    }
  }
  bytes(field, buf) {
    this.key(field, BYTES);
    this.varint(buf.length);
    this.parts.push(buf);
  }
  string(field, s) {
    if (s) this.bytes(field, Buffer.from(s, "utf8"));
  }
  finish() {
    return Buffer.concat(this.parts);
  }
}

function fromBot(field, body) {
  const w = new Writer();
  w.bytes(field, body);
  return w.finish();
}

function encodeReady(protocolVersion, botName, keepsStream) {
  const w = new Writer();
  w.uint(1, protocolVersion);
  w.string(2, botName);
  w.uint(3, keepsStream ? 1 : 0);
  return fromBot(1, w.finish());
}

function encodeDecision(index, action) {
  const w = new Writer();
  w.uint(1, index);
  w.uint(2, action);
  return fromBot(2, w.finish());
}

// BotError.Kind: EXCEPTION = 1 (a CRASH), ILLEGAL_CHOICE = 2 (INVALID).
const EXCEPTION = 1;
const ILLEGAL_CHOICE = 2;

function encodeError(index, kind, detail) {
  const w = new Writer();
  w.uint(1, index);
  w.uint(2, kind);
  w.string(3, detail);
  return fromBot(3, w.finish());
}

function encodeEnded() {
  return fromBot(4, Buffer.alloc(0));
}

module.exports = {
  decodeToBot,
  encodeReady,
  encodeDecision,
  encodeError,
  encodeEnded,
  EXCEPTION,
  ILLEGAL_CHOICE,
};
