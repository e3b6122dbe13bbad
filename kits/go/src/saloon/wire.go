package saloon

// The bot protocol's messages (proto/saloon/v1/bot.proto) in protobuf's wire format, by
// hand with protowire: the runtime needs no generated code. Only the fields a bot reads or
// writes are known; every other field is skipped, as protobuf's decoders do, so a newer
// referee's additions are ignored.

import (
	"errors"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

type matchStart struct {
	protocolVersion uint32
	matchID         string
	game            string
	optionsJSON     string
	seat, numSeats  uint32
	seed            uint64
	decisionMs      uint32
	bankMs, startMs uint32
	keepStream      bool
}

type decisionRequest struct {
	index          uint32
	kind           string
	observation    []byte
	legal          []byte
	decisionMs     uint32
	bankMs         uint32
}

type matchEnd struct {
	scores []float64
	ranks  []uint32
}

type toBot struct {
	start    *matchStart
	decision *decisionRequest
	end      *matchEnd
}

var errTruncated = errors.New("truncated protobuf message")

// fields calls each for every (number, type, value) of a message; value is the varint or
// the bytes' body (fixed values come as their bits).
func fields(b []byte, each func(num protowire.Number, typ protowire.Type, v uint64, body []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errTruncated
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return errTruncated
			}
			each(num, typ, v, nil)
			b = b[m:]
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return errTruncated
			}
			each(num, typ, 0, v)
			b = b[m:]
		case protowire.Fixed64Type:
			v, m := protowire.ConsumeFixed64(b)
			if m < 0 {
				return errTruncated
			}
			each(num, typ, v, nil)
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return errTruncated
			}
			b = b[m:]
		}
	}
	return nil
}

func decodeStart(b []byte) (*matchStart, error) {
	m := &matchStart{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) {
		if typ == protowire.VarintType {
			switch num {
			case 1:
				m.protocolVersion = uint32(v)
			case 5:
				m.seat = uint32(v)
			case 6:
				m.numSeats = uint32(v)
			case 7:
				m.seed = v
			case 8:
				m.decisionMs = uint32(v)
			case 9:
				m.bankMs = uint32(v)
			case 10:
				m.startMs = uint32(v)
			case 11:
				m.keepStream = v != 0
			}
		} else if typ == protowire.BytesType {
			switch num {
			case 2:
				m.matchID = string(body)
			case 3:
				m.game = string(body)
			case 4:
				m.optionsJSON = string(body)
			}
		}
	})
	return m, err
}

func decodeDecision(b []byte) (*decisionRequest, error) {
	m := &decisionRequest{}
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) {
		if typ == protowire.VarintType {
			switch num {
			case 1:
				m.index = uint32(v)
			case 5:
				m.decisionMs = uint32(v)
			case 6:
				m.bankMs = uint32(v)
			}
		} else if typ == protowire.BytesType {
			switch num {
			case 2:
				m.kind = string(body)
			case 3:
				m.observation = body
			case 4:
				m.legal = body
			}
		}
	})
	return m, err
}

func decodeEnd(b []byte) (*matchEnd, error) {
	m := &matchEnd{}
	var inner error
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) {
		switch {
		case num == 1 && typ == protowire.BytesType: // packed doubles
			for len(body) >= 8 {
				bits, _ := protowire.ConsumeFixed64(body)
				m.scores = append(m.scores, math.Float64frombits(bits))
				body = body[8:]
			}
		case num == 1 && typ == protowire.Fixed64Type:
			m.scores = append(m.scores, math.Float64frombits(v))
		case num == 2 && typ == protowire.BytesType: // packed varints
			for len(body) > 0 {
				r, n := protowire.ConsumeVarint(body)
				if n < 0 {
					inner = errTruncated
					return
				}
				m.ranks = append(m.ranks, uint32(r))
				body = body[n:]
			}
		case num == 2 && typ == protowire.VarintType:
			m.ranks = append(m.ranks, uint32(v))
		}
	})
	if err == nil {
		err = inner
	}
	return m, err
}

// decodeToBot reads ToBot: {start} | {decision} | {end}, or nothing this runtime knows.
func decodeToBot(b []byte) (toBot, error) {
	var out toBot
	var inner error
	err := fields(b, func(num protowire.Number, typ protowire.Type, v uint64, body []byte) {
		if typ != protowire.BytesType {
			return
		}
		var e error
		switch num {
		case 1:
			out = toBot{}
			out.start, e = decodeStart(body)
		case 2:
			out = toBot{}
			out.decision, e = decodeDecision(body)
		case 3:
			out = toBot{}
			out.end, e = decodeEnd(body)
		}
		if e != nil {
			inner = e
		}
	})
	if err == nil {
		err = inner
	}
	return out, err
}

func appendUint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func fromBot(num protowire.Number, body []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

func encodeReady(version uint32, name string, keeps bool) []byte {
	var b []byte
	b = appendUint(b, 1, uint64(version))
	b = appendString(b, 2, name)
	if keeps {
		b = appendUint(b, 3, 1)
	}
	return fromBot(1, b)
}

func encodeDecision(index, action uint32) []byte {
	var b []byte
	b = appendUint(b, 1, uint64(index))
	b = appendUint(b, 2, uint64(action))
	return fromBot(2, b)
}

// BotError.Kind: a CRASH or an INVALID choice.
const (
	errorException     = 1
	errorIllegalChoice = 2
)

func encodeError(index uint32, kind uint64, detail string) []byte {
	var b []byte
	b = appendUint(b, 1, uint64(index))
	b = appendUint(b, 2, kind)
	b = appendString(b, 3, detail)
	return fromBot(3, b)
}

func encodeEnded() []byte { return fromBot(4, nil) }
