"use strict";
// The bot protocol's messages (proto/saloon/v1/bot.proto) in protobuf's wire format, by
// hand: the runtime then needs no .proto file and no protobuf library at start-up. Only
// the fields of package saloon.v1 that a bot reads or writes are known; every other field
// is skipped, as protobuf's own decoders do, so a newer referee's additions are ignored.
// Plain loops on numbers (a BigInt for the one uint64, the seed): a bot's runtime is cold,
// and this is what V8's interpreter runs for every message.

const VARINT = 0;
const FIXED64 = 1;
const BYTES = 2;
const FIXED32 = 5;

class Reader {
  constructor(buf, pos, end) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }
  // A varint's low 32 bits, as an unsigned number (what a uint32 or enum field holds).
  uint() {
    const buf = this.buf;
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw new Error("truncated varint");
      const b = buf[this.pos++];
      if (shift < 32) result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
      if (shift > 63) throw new Error("varint too long");
    }
  }
  // A varint whole, as a BigInt (uint64 fields: the seed needs all 64 bits).
  varint64() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new Error("truncated varint");
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new Error("varint too long");
    }
  }
  // A length-delimited field's bounds: [start, end), the reader moved past it.
  span() {
    const n = this.uint();
    const start = this.pos;
    if (start + n > this.end) throw new Error("truncated field");
    this.pos = start + n;
    return start;
  }
  bytes() {
    const start = this.span();
    return this.buf.subarray(start, this.pos);
  }
  string() {
    const start = this.span();
    return this.buf.toString("utf8", start, this.pos);
  }
  skip(wire) {
    if (wire === VARINT) this.uint();
    else if (wire === FIXED64) this.pos += 8;
    else if (wire === BYTES) this.span();
    else if (wire === FIXED32) this.pos += 4;
    else throw new Error(`unknown wire type ${wire}`);
    if (this.pos > this.end) throw new Error("truncated field");
  }
}

function decodeStart(buf, pos, end) {
  const r = new Reader(buf, pos, end);
  const m = {
    protocolVersion: 0, matchId: "", game: "", optionsJson: "", seat: 0, numSeats: 0,
    seed: 0n, decisionMs: 0, bankMs: 0, startMs: 0, keepStream: false,
  };
  while (r.pos < end) {
    const key = r.uint();
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === VARINT && field === 7) m.seed = r.varint64();
    else if (wire === VARINT && field === 11) m.keepStream = r.varint64() !== 0n;
    else if (wire === VARINT) {
      const v = r.uint();
      if (field === 1) m.protocolVersion = v;
      else if (field === 5) m.seat = v;
      else if (field === 6) m.numSeats = v;
      else if (field === 8) m.decisionMs = v;
      else if (field === 9) m.bankMs = v;
      else if (field === 10) m.startMs = v;
    } else if (wire === BYTES && field === 2) m.matchId = r.string();
    else if (wire === BYTES && field === 3) m.game = r.string();
    else if (wire === BYTES && field === 4) m.optionsJson = r.string();
    else r.skip(wire);
  }
  return m;
}

function decodeDecision(buf, pos, end) {
  const r = new Reader(buf, pos, end);
  const m = { index: 0, kind: "", observationJson: null, legalJson: null, decisionMs: 0, bankMs: 0 };
  while (r.pos < end) {
    const key = r.uint();
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === VARINT) {
      const v = r.uint();
      if (field === 1) m.index = v;
      else if (field === 5) m.decisionMs = v;
      else if (field === 6) m.bankMs = v;
    } else if (wire === BYTES && field === 2) m.kind = r.string();
    else if (wire === BYTES && field === 3) m.observationJson = r.bytes();
    else if (wire === BYTES && field === 4) m.legalJson = r.bytes();
    else r.skip(wire);
  }
  if (m.observationJson === null) m.observationJson = buf.subarray(0, 0);
  if (m.legalJson === null) m.legalJson = buf.subarray(0, 0);
  return m;
}

function decodeEnd(buf, pos, end) {
  const r = new Reader(buf, pos, end);
  const m = { scores: [], ranks: [] };
  while (r.pos < end) {
    const key = r.uint();
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 1 && wire === BYTES) {
      const start = r.span();
      for (let i = start; i + 8 <= r.pos; i += 8) m.scores.push(buf.readDoubleLE(i));
    } else if (field === 1 && wire === FIXED64) {
      if (r.pos + 8 > end) throw new Error("truncated field");
      m.scores.push(buf.readDoubleLE(r.pos));
      r.pos += 8;
    } else if (field === 2 && wire === BYTES) {
      const start = r.span();
      const inner = new Reader(buf, start, r.pos);
      while (inner.pos < inner.end) m.ranks.push(inner.uint());
    } else if (field === 2 && wire === VARINT) {
      m.ranks.push(r.uint());
    } else r.skip(wire);
  }
  return m;
}

// ToBot: {start} | {decision} | {end} (or {} for a message this runtime does not know).
function decodeToBot(buf) {
  const r = new Reader(buf, 0, buf.length);
  let out = {};
  while (r.pos < r.end) {
    const key = r.uint();
    const field = key >>> 3;
    const wire = key & 7;
    if (wire !== BYTES) {
      r.skip(wire);
      continue;
    }
    const start = r.span();
    if (field === 1) out = { start: decodeStart(buf, start, r.pos) };
    else if (field === 2) out = { decision: decodeDecision(buf, start, r.pos) };
    else if (field === 3) out = { end: decodeEnd(buf, start, r.pos) };
  }
  return out;
}

// -- encoding: FromBot messages, each built into one buffer ---------------------------------
function varintSize(v) {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function putVarint(buf, pos, v) {
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

// Size of a uint32 field (0: left out, as proto3 does) and of a bytes field (empty: left out).
function uintFieldSize(v) {
  return v ? 1 + varintSize(v) : 0;
}

function bytesFieldSize(b) {
  return b.length ? 1 + varintSize(b.length) + b.length : 0;
}

function putUint(buf, pos, field, v) {
  if (!v) return pos;
  buf[pos++] = (field << 3) | VARINT;
  return putVarint(buf, pos, v);
}

function putBytes(buf, pos, field, b) {
  if (!b.length) return pos;
  buf[pos++] = (field << 3) | BYTES;
  pos = putVarint(buf, pos, b.length);
  b.copy(buf, pos);
  return pos + b.length;
}

// FromBot{field: inner}, inner being `size` bytes that `fill(buf, pos)` writes.
function fromBot(field, size, fill) {
  const out = Buffer.allocUnsafe(1 + varintSize(size) + size);
  out[0] = (field << 3) | BYTES;
  fill(out, putVarint(out, 1, size));
  return out;
}

function encodeReady(protocolVersion, botName, keepsStream) {
  const name = Buffer.from(botName || "", "utf8");
  const keeps = keepsStream ? 1 : 0;
  const size = uintFieldSize(protocolVersion) + bytesFieldSize(name) + uintFieldSize(keeps);
  return fromBot(1, size, (buf, pos) => {
    pos = putUint(buf, pos, 1, protocolVersion);
    pos = putBytes(buf, pos, 2, name);
    putUint(buf, pos, 3, keeps);
  });
}

function encodeDecision(index, action) {
  const size = uintFieldSize(index) + uintFieldSize(action);
  const out = Buffer.allocUnsafe(2 + size);
  out[0] = (2 << 3) | BYTES;
  out[1] = size;
  putUint(out, putUint(out, 2, 1, index), 2, action);
  return out;
}

// BotError.Kind: EXCEPTION = 1 (a CRASH), ILLEGAL_CHOICE = 2 (INVALID).
const EXCEPTION = 1;
const ILLEGAL_CHOICE = 2;

function encodeError(index, kind, detail) {
  const text = Buffer.from(detail || "", "utf8");
  const size = uintFieldSize(index) + uintFieldSize(kind) + bytesFieldSize(text);
  return fromBot(3, size, (buf, pos) => {
    pos = putUint(buf, pos, 1, index);
    pos = putUint(buf, pos, 2, kind);
    putBytes(buf, pos, 3, text);
  });
}

function encodeEnded() {
  return Buffer.from([(4 << 3) | BYTES, 0]);
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
