// Package saloon is Saloon's bot runtime for Go: it serves one bot over the bot protocol
// exactly as the Python runtime (saloon.sdk.run) does. docs/protocol.md is the protocol from
// the bot's side; this package is one implementation of it.
//
// A bot is one function, Act, in package main: it is handed each Decision and returns the
// index of one of its legal actions. The build step adds the program's main, which calls
// Main(Act). The typed views of each game (package saloon/games/<game>) decode a decision's
// observation and legal actions.
//
// The program writes PATH.loading once it is up, then serves gRPC on the unix socket PATH.
// Each Bot.Play stream is one match; a kept stream (MatchStart.keep_stream) plays further
// matches. A panic in Act is reported as a BotError naming the bot's file:line, never a
// broken stream; what the bot prints (stdout or stderr) goes to stderr, marked by the
// moment of the match it was printed at.
package saloon

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
)

// ProtocolVersion is the bot protocol's version this runtime speaks.
const ProtocolVersion = 1

const (
	maxBotMessageBytes     = 64 * 1024
	maxRefereeMessageBytes = 16 * 1024 * 1024
	// What the referee reads as the reason a bot did not load (the Python runtime's words).
	loadError = "saloon.sdk.run: cannot load the bot: "
	// The start of a mark line on stderr (a record separator, then the moment).
	markPrefix = "\x1e[saloon] "
)

// Match is what a bot knows of its match from its start.
type Match struct {
	ID       string
	Game     string
	Options  map[string]interface{}
	Seat     int
	NumSeats int
	// Seed for the bot's own randomness (derived from the match seed and the seat).
	Seed uint64
	// Time per decision, and the match's time bank drawn on beyond it, in milliseconds.
	DecisionMs int
	BankMs     int
}

// Clock is one decision's time.
type Clock struct {
	// This decision's time and what is left of the match's bank, in milliseconds.
	DecisionMs int
	BankMs     int
	// When the runtime received the request.
	StartedAt time.Time
}

// Deadline is when the decision's own time runs out (the bank is drawn on after it).
func (c Clock) Deadline() time.Time {
	return c.StartedAt.Add(time.Duration(c.DecisionMs) * time.Millisecond)
}

// Decision is one request to decide: the seat's observation and the legal actions as the
// engine's JSON (a game's typed view decodes them: saloon/games/<game>.View).
type Decision struct {
	// The game's decision kind, e.g. "PLAY_CARD".
	Kind string
	// The seat's observation, a JSON object.
	Observation json.RawMessage
	// The legal actions; Act returns the index of one of them.
	Legal []json.RawMessage
	// The match log index this decision becomes.
	Index int
	Match *Match
	Clock Clock
}

// Note writes a line to the bot's stderr (kept with the match, marked by this decision).
func (d Decision) Note(text string) {
	fmt.Fprintf(os.Stderr, "note: %s\n", text)
}

// Decode decodes the observation into v (a game view's Observation), panicking on JSON the
// view does not fit: a panic in Act is reported as the bot's error.
func (d Decision) Decode(v interface{}) {
	if err := json.Unmarshal(d.Observation, v); err != nil {
		panic(fmt.Sprintf("the observation does not decode: %v", err))
	}
}

// MustDecode decodes one JSON value (a legal action) into v, panicking when it does not
// fit (a game view's LegalKIND uses it).
func MustDecode(raw json.RawMessage, v interface{}) {
	if err := json.Unmarshal(raw, v); err != nil {
		panic(fmt.Sprintf("a legal action does not decode: %v", err))
	}
}

// Act decides: the index into d.Legal of the action to play.
type Act func(d Decision) int

// -- stderr, marked by moment ---------------------------------------------------------------

type markedOutput struct {
	mu   sync.Mutex
	w    *os.File // the pipe the bot's stdout and stderr write to
	done chan struct{}
}

var output *markedOutput

// mark says that what the bot prints from now on was printed at moment (a line on stderr
// before the first of it, none when it prints nothing).
func mark(moment string) {
	if output == nil {
		return
	}
	output.mu.Lock()
	defer output.mu.Unlock()
	_, _ = output.w.WriteString(markPrefix + moment + "\n")
}

// captureOutput sends what the bot prints to stdout or stderr (os.Stdout, os.Stderr, the
// log package, file descriptor 1) through a pipe to the real stderr, inserting each moment's
// mark before the first text printed at it. The marks travel in the same pipe, so they stay
// in order with the text. (The Go runtime's own fatal errors still go straight to fd 2.)
func captureOutput() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	real := os.NewFile(uintptr(syscall.Stderr), "/dev/stderr")
	out := &markedOutput{w: w, done: make(chan struct{})}
	_ = syscall.Dup3(int(w.Fd()), syscall.Stdout, 0)
	os.Stdout = w
	os.Stderr = w
	log.SetOutput(w)
	output = out
	go copyMarked(r, real, out.done)
}

func copyMarked(r io.Reader, dst io.Writer, done chan struct{}) {
	defer close(done)
	prefix := []byte(markPrefix)
	pending := ""
	lineStart := true
	var held []byte
	buf := make([]byte, 64*1024)
	emit := func(text []byte) {
		if len(text) == 0 {
			return
		}
		if pending != "" {
			sep := ""
			if !lineStart {
				sep = "\n"
			}
			_, _ = io.WriteString(dst, sep+markPrefix+pending+"\n")
			pending = ""
		}
		_, _ = dst.Write(text)
		lineStart = text[len(text)-1] == '\n'
	}
	for {
		n, err := r.Read(buf)
		data := append(held, buf[:n]...)
		held = nil
		for len(data) > 0 {
			at := bytes.Index(data, prefix)
			if at < 0 {
				// Keep back a tail that may be the start of a mark split by the read.
				keep := 0
				for k := len(prefix) - 1; k > 0; k-- {
					if len(data) >= k && bytes.Equal(data[len(data)-k:], prefix[:k]) {
						keep = k
						break
					}
				}
				emit(data[:len(data)-keep])
				held = append(held, data[len(data)-keep:]...)
				break
			}
			emit(data[:at])
			end := bytes.IndexByte(data[at:], '\n')
			if end < 0 {
				held = append(held, data[at:]...)
				break
			}
			pending = string(data[at+len(prefix) : at+end])
			data = data[at+end+1:]
		}
		if err != nil {
			emit(held)
			return
		}
	}
}

func flushOutput() {
	if output == nil {
		return
	}
	_ = output.w.Close()
	_ = syscall.Close(syscall.Stdout)
	select {
	case <-output.done:
	case <-time.After(500 * time.Millisecond):
	}
}

// -- panics, described on one line with the bot's file:line -------------------------------

var kitDir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file) + string(filepath.Separator)
}()

// botPlace is the bot's own frame nearest the panic: file:line, its path relative to the
// bot's folder (/bot in a bot image).
func botPlace() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	root := runtime.GOROOT() + "/"
	for {
		f, more := frames.Next()
		if f.File != "" && !strings.HasPrefix(f.File, root) && !strings.HasPrefix(f.File, kitDir) &&
			!strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s:%d", shortPath(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

func shortPath(file string) string {
	if rest := strings.TrimPrefix(file, "/bot/"); rest != file {
		return rest
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, file); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return file
}

// protect runs f; a panic in it becomes the one-line description of what the bot did.
func protect(hook string, f func()) (detail string) {
	defer func() {
		if p := recover(); p != nil {
			place := botPlace()
			fmt.Fprintf(os.Stderr, "%s panicked: %v\n%s", hook, p, debug.Stack())
			detail = fmt.Sprintf("%s panicked: %v", hook, p)
			if len(detail) > 900 {
				detail = detail[:900]
			}
			if place != "" {
				detail += " at " + place
			}
		}
	}()
	f()
	return ""
}

// -- matches --------------------------------------------------------------------------------

type session struct {
	act        Act
	name       string
	match      *Match
	keepStream bool
}

func (s *session) start(m *matchStart) []byte {
	s.keepStream = m.keepStream
	options := map[string]interface{}{}
	if m.optionsJSON != "" {
		_ = json.Unmarshal([]byte(m.optionsJSON), &options)
	}
	s.match = &Match{
		ID: m.matchID, Game: m.game, Options: options, Seat: int(m.seat),
		NumSeats: int(m.numSeats), Seed: m.seed, DecisionMs: int(m.decisionMs), BankMs: int(m.bankMs),
	}
	mark("start")
	return encodeReady(ProtocolVersion, s.name, s.keepStream)
}

func (s *session) decide(r *decisionRequest) []byte {
	started := time.Now()
	if s.match == nil {
		return encodeError(r.index, errorException, "decision request before a successful match start")
	}
	mark(fmt.Sprintf("decision %d", r.index))
	var legal []json.RawMessage
	if err := json.Unmarshal(r.legal, &legal); err != nil {
		return encodeError(r.index, errorException, "the legal actions are not a JSON array: "+err.Error())
	}
	d := Decision{
		Kind: r.kind, Observation: r.observation, Legal: legal, Index: int(r.index), Match: s.match,
		Clock: Clock{DecisionMs: int(r.decisionMs), BankMs: int(r.bankMs), StartedAt: started},
	}
	choice := -1
	if detail := protect("Act", func() { choice = s.act(d) }); detail != "" {
		return encodeError(r.index, errorException, detail)
	}
	if choice < 0 || choice >= len(legal) {
		detail := fmt.Sprintf("%d is not the index of one of the %d legal actions", choice, len(legal))
		fmt.Fprintf(os.Stderr, "decision %d: %s\n", r.index, detail)
		return encodeError(r.index, errorIllegalChoice, detail)
	}
	return encodeDecision(r.index, uint32(choice))
}

// play serves one Bot.Play stream: a match, or several on a kept stream.
func (s *session) play(stream grpc.ServerStream) error {
	for {
		var frame []byte
		if err := stream.RecvMsg(&frame); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		message, err := decodeToBot(frame)
		if err != nil {
			return err
		}
		var reply []byte
		switch {
		case message.decision != nil:
			reply = s.decide(message.decision)
		case message.start != nil:
			reply = s.start(message.start)
		case message.end != nil:
			mark("end")
			if !s.keepStream {
				return nil
			}
			s.match = nil
			reply = encodeEnded()
		default:
			continue
		}
		if err := stream.SendMsg(reply); err != nil {
			return err
		}
	}
}

// rawCodec passes the runtime's hand-encoded messages through as bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("rawCodec: %T", v)
	}
	*p = data
	return nil
}

func (rawCodec) String() string { return "proto" }

type botService interface{}

func service(act Act, name string) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: "saloon.v1.Bot",
		HandlerType: (*botService)(nil),
		Streams: []grpc.StreamDesc{{
			StreamName: "Play",
			Handler: func(_ interface{}, stream grpc.ServerStream) error {
				return (&session{act: act, name: name}).play(stream)
			},
			ServerStreams: true,
			ClientStreams: true,
		}},
		Metadata: "saloon/v1/bot.proto",
	}
}

// Main serves act: `PROGRAM --socket PATH` on a unix socket (as the sandboxes run it) or
// `PROGRAM --port N` on 127.0.0.1. It returns only when the program ends.
func Main(act Act) {
	flags := flag.NewFlagSet(filepath.Base(os.Args[0]), flag.ContinueOnError)
	socket := flags.String("socket", "", "serve on this unix socket")
	port := flags.Int("port", -1, "serve on 127.0.0.1:PORT")
	name := flags.String("name", "go bot", "the bot's name in its Ready")
	if err := flags.Parse(os.Args[1:]); err != nil || (*socket == "") == (*port < 0) || flags.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: BOT --socket PATH | --port N")
		os.Exit(2)
	}
	if *socket != "" {
		marker := *socket + ".loading"
		if err := os.WriteFile(marker+".tmp", []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err == nil {
			_ = os.Rename(marker+".tmp", marker)
		}
	}
	if act == nil {
		fmt.Fprintln(os.Stderr, loadError+"no Act function")
		os.Exit(2)
	}
	captureOutput()
	var listener net.Listener
	var err error
	if *socket != "" {
		_ = os.Remove(*socket)
		listener, err = net.Listen("unix", *socket)
	} else {
		listener, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "saloon runtime: cannot serve: %v\n", err)
		flushOutput()
		os.Exit(1)
	}
	if *port >= 0 {
		fmt.Fprintf(os.Stderr, "saloon runtime: serving on %s\n", listener.Addr())
	}
	//nolint:staticcheck // CustomCodec: the codec of every call, whatever its content-subtype.
	server := grpc.NewServer(
		grpc.CustomCodec(rawCodec{}),
		grpc.MaxRecvMsgSize(maxRefereeMessageBytes),
		grpc.MaxSendMsgSize(maxBotMessageBytes),
	)
	server.RegisterService(service(act, *name), struct{}{})
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		server.Stop()
		flushOutput()
		os.Exit(0)
	}()
	if err := server.Serve(listener); err != nil {
		fmt.Fprintf(os.Stderr, "saloon runtime: %v\n", err)
	}
	flushOutput()
}
