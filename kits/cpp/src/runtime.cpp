// Saloon's bot runtime for C++ (libsaloon.a): the program's main, serving saloon::act over
// the bot protocol exactly as the Python runtime (saloon.sdk.run) does. See saloon.hpp.
//
// Built once in the runtime image with the protocol's generated code (protoc and
// grpc_cpp_plugin from proto/saloon/v1/bot.proto); a bot's build only links it.

#include <backtrace.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <mutex>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "saloon/saloon.hpp"
#include "saloon/v1/bot.grpc.pb.h"

namespace {

constexpr int kMaxBotMessageBytes = 64 * 1024;
constexpr int kMaxRefereeMessageBytes = 16 * 1024 * 1024;
// The start of a mark line on stderr (a record separator, then the moment).
const std::string kMarkPrefix = "\x1e[saloon] ";
// Characters of a BotError's detail (the Python runtime's cut).
constexpr std::size_t kDetailChars = 900;

// -- stderr, marked by moment ---------------------------------------------------------------
// What the bot prints to stdout or stderr (std::cout, std::cerr, printf, fd 1 and 2) goes
// through a pipe to the real stderr; the runtime writes each moment's mark into the same
// pipe, so marks stay in order with the text, and the copier writes a mark only before the
// first text printed at its moment (a quiet bot's stderr stays empty).

int real_stderr = 2;
int pipe_write = -1;
std::thread copier;
std::atomic<bool> copier_done{false};

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void mark(const std::string& moment) {
  if (pipe_write < 0) return;
  std::fflush(stdout);
  std::cout.flush();
  std::string line = kMarkPrefix + moment + "\n";
  write_all(pipe_write, line.data(), line.size());  // one write, under PIPE_BUF: atomic
}

void copy_marked(int from) {
  std::string pending;
  bool line_start = true;
  std::string held;
  std::vector<char> buf(64 * 1024);
  auto emit = [&](const std::string& text) {
    if (text.empty()) return;
    if (!pending.empty()) {
      std::string line = (line_start ? "" : "\n") + kMarkPrefix + pending + "\n";
      write_all(real_stderr, line.data(), line.size());
      pending.clear();
    }
    write_all(real_stderr, text.data(), text.size());
    line_start = text.back() == '\n';
  };
  for (;;) {
    ssize_t n = ::read(from, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      emit(held);
      break;
    }
    std::string data = held + std::string(buf.data(), static_cast<std::size_t>(n));
    held.clear();
    while (!data.empty()) {
      std::size_t at = data.find(kMarkPrefix);
      if (at == std::string::npos) {
        // Keep back a tail that may be the start of a mark split by the read.
        std::size_t keep = 0;
        for (std::size_t k = kMarkPrefix.size() - 1; k > 0; --k) {
          if (data.size() >= k && data.compare(data.size() - k, k, kMarkPrefix, 0, k) == 0) {
            keep = k;
            break;
          }
        }
        emit(data.substr(0, data.size() - keep));
        held = data.substr(data.size() - keep);
        break;
      }
      emit(data.substr(0, at));
      std::size_t end = data.find('\n', at);
      if (end == std::string::npos) {
        held = data.substr(at);
        break;
      }
      pending = data.substr(at + kMarkPrefix.size(), end - at - kMarkPrefix.size());
      data = data.substr(end + 1);
    }
  }
  copier_done = true;
}

void capture_output() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  real_stderr = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (real_stderr < 0) {
    real_stderr = 2;
    return;
  }
  ::dup2(fds[1], 1);
  ::dup2(fds[1], 2);
  pipe_write = fds[1];
  // Line-buffered: a bot that crashes loses at most its last partial line of std::cout.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  copier = std::thread(copy_marked, fds[0]);
}

// Ends the pipe's writers and lets the copier drain it (a bounded wait).
void flush_output() {
  if (pipe_write < 0) return;
  std::fflush(stdout);
  std::cout.flush();
  ::close(pipe_write);
  ::close(1);
  ::close(2);
  pipe_write = -1;
  for (int i = 0; i < 50 && !copier_done; ++i) ::usleep(10 * 1000);
  if (copier.joinable()) {
    if (copier_done) {
      copier.join();
    } else {
      copier.detach();
    }
  }
}

// A fatal signal (a crash in the bot): what the bot printed reaches stderr first.
void on_fatal(int sig) {
  if (pipe_write >= 0) {
    ::close(pipe_write);
    ::close(1);
    ::close(2);
    for (int i = 0; i < 20 && !copier_done; ++i) ::usleep(10 * 1000);
  }
  const char* name = strsignal(sig);
  write_all(real_stderr, "saloon runtime: the bot died of ", 32);
  write_all(real_stderr, name, std::strlen(name));
  write_all(real_stderr, "\n", 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// -- exceptions, described on one line with the bot's file:line -------------------------------
// __cxa_throw is defined here (the program's own, so every throw, the standard library's
// too, comes through it): the stack at the throw is kept, and a throw that escapes act is
// described with the bot's own frame nearest it (file:line from the program's debug info).

constexpr int kMaxFrames = 64;
thread_local void* throw_frames[kMaxFrames];
thread_local int throw_depth = 0;

backtrace_state* symbols() {
  static backtrace_state* state = backtrace_create_state(nullptr, 1, nullptr, nullptr);
  return state;
}

struct Place {
  std::string where;
};

int on_pc(void* data, uintptr_t, const char* file, int line, const char*) {
  auto* place = static_cast<Place*>(data);
  if (file == nullptr || line <= 0 || !place->where.empty()) return 0;
  std::string path(file);
  if (path.rfind("/usr/", 0) == 0 || path.rfind("/opt/saloon/", 0) == 0) return 0;
  if (path.rfind("/bot/", 0) == 0) path = path.substr(5);
  if (path.rfind("./", 0) == 0) path = path.substr(2);
  place->where = path + ":" + std::to_string(line);
  return 1;
}

void on_symbol_error(void*, const char*, int) {}

// The bot's own frame nearest the last throw on this thread: "bot.cpp:7", or "".
std::string bot_place() {
  backtrace_state* state = symbols();
  if (state == nullptr) return "";
  Place place;
  for (int i = 0; i < throw_depth && place.where.empty(); ++i) {
    // A return address: the call is the instruction before it.
    auto pc = reinterpret_cast<uintptr_t>(throw_frames[i]) - 1;
    backtrace_pcinfo(state, pc, on_pc, on_symbol_error, &place);
  }
  return place.where;
}

std::string type_name(const std::type_info* type) {
  if (type == nullptr) return "an exception";
  int status = 0;
  char* name = abi::__cxa_demangle(type->name(), nullptr, nullptr, &status);
  std::string text = status == 0 && name != nullptr ? name : type->name();
  std::free(name);
  return text;
}

// The one-line description of what escaped `hook` (call inside its catch block).
std::string describe(const std::string& hook) {
  std::string what;
  const std::type_info* type = abi::__cxa_current_exception_type();
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  std::string detail = hook + " threw " + type_name(type);
  if (!what.empty()) detail += ": " + what;
  if (detail.size() > kDetailChars) detail.resize(kDetailChars);
  std::string place = bot_place();
  if (!place.empty()) detail += " at " + place;
  return detail;
}

// -- matches --------------------------------------------------------------------------------
using saloon::v1::FromBot;
using saloon::v1::ToBot;

// One bot, one decision at a time: act may keep state in globals.
std::mutex act_lock;

struct Session {
  std::string name;
  std::unique_ptr<saloon::Match> match;
  bool keep_stream = false;

  FromBot start(const saloon::v1::MatchStart& m) {
    keep_stream = m.keep_stream();
    auto next = std::make_unique<saloon::Match>();
    next->id = m.match_id();
    next->game = m.game();
    next->options = saloon::json::object();
    if (!m.options_json().empty()) {
      next->options = saloon::json::parse(m.options_json(), nullptr, false);
      if (next->options.is_discarded()) next->options = saloon::json::object();
    }
    next->seat = static_cast<int>(m.seat());
    next->num_seats = static_cast<int>(m.num_seats());
    next->seed = m.seed();
    next->decision_ms = static_cast<int>(m.decision_ms());
    next->bank_ms = static_cast<int>(m.bank_ms());
    match = std::move(next);
    mark("start");
    FromBot reply;
    auto* ready = reply.mutable_ready();
    ready->set_protocol_version(saloon::kProtocolVersion);
    ready->set_bot_name(name);
    ready->set_keeps_stream(keep_stream);
    return reply;
  }

  static FromBot error(std::uint32_t index, saloon::v1::BotError::Kind kind,
                       const std::string& detail) {
    FromBot reply;
    auto* e = reply.mutable_error();
    e->set_index(index);
    e->set_kind(kind);
    e->set_detail(detail);
    return reply;
  }

  FromBot decide(const saloon::v1::DecisionRequest& r) {
    auto started = std::chrono::steady_clock::now();
    if (!match) {
      return error(r.index(), saloon::v1::BotError::EXCEPTION,
                   "decision request before a successful match start");
    }
    mark("decision " + std::to_string(r.index()));
    saloon::Decision d;
    d.kind = r.kind();
    d.observation_json = r.observation_json();
    d.legal = saloon::json::parse(r.legal_json(), nullptr, false);
    if (!d.legal.is_array()) {
      return error(r.index(), saloon::v1::BotError::EXCEPTION,
                   "the legal actions are not a JSON array");
    }
    d.index = static_cast<int>(r.index());
    d.match = match.get();
    d.clock.decision_ms = static_cast<int>(r.decision_ms());
    d.clock.bank_ms = static_cast<int>(r.bank_ms());
    d.clock.started_at = started;
    int choice = -1;
    {
      std::lock_guard<std::mutex> hold(act_lock);
      try {
        choice = saloon::act(d);
      } catch (...) {
        std::string detail = describe("act");
        std::fflush(stdout);
        std::cout.flush();
        std::cerr << detail << std::endl;
        return error(r.index(), saloon::v1::BotError::EXCEPTION, detail);
      }
      std::fflush(stdout);
      std::cout.flush();
    }
    int count = static_cast<int>(d.legal.size());
    if (choice < 0 || choice >= count) {
      std::string detail = std::to_string(choice) + " is not the index of one of the " +
                           std::to_string(count) + " legal actions";
      std::cerr << "decision " << r.index() << ": " << detail << std::endl;
      return error(r.index(), saloon::v1::BotError::ILLEGAL_CHOICE, detail);
    }
    FromBot reply;
    reply.mutable_decision()->set_index(r.index());
    reply.mutable_decision()->set_action(static_cast<std::uint32_t>(choice));
    return reply;
  }
};

class BotService final : public saloon::v1::Bot::Service {
 public:
  explicit BotService(std::string name) : name_(std::move(name)) {}

  // One Bot.Play stream: a match, or several on a kept stream.
  grpc::Status Play(grpc::ServerContext*,
                    grpc::ServerReaderWriter<FromBot, ToBot>* stream) override {
    Session session{name_};
    ToBot message;
    while (stream->Read(&message)) {
      FromBot reply;
      switch (message.message_case()) {
        case ToBot::kDecision:
          reply = session.decide(message.decision());
          break;
        case ToBot::kStart:
          reply = session.start(message.start());
          break;
        case ToBot::kEnd:
          mark("end");
          if (!session.keep_stream) return grpc::Status::OK;
          // A kept stream: the match is over for the bot; the next one starts afresh.
          session = Session{name_};
          reply.mutable_ended();
          break;
        default:
          continue;
      }
      if (!stream->Write(reply)) break;
    }
    return grpc::Status::OK;
  }

 private:
  std::string name_;
};

void usage() {
  std::cerr << "usage: BOT --socket PATH | --port N [--name NAME]" << std::endl;
  std::exit(2);
}

}  // namespace

// The program's __cxa_throw: keeps the stack at the throw, then throws as the C++ runtime
// does (its own __cxa_throw, the next definition after this program's).
extern "C" [[noreturn]] void __cxa_throw(void* thrown, void* type, void (*destroy)(void*)) {
  using Throw = void (*)(void*, void*, void (*)(void*));
  static Throw real = reinterpret_cast<Throw>(dlsym(RTLD_NEXT, "__cxa_throw"));
  throw_depth = ::backtrace(throw_frames, kMaxFrames);
  real(thrown, type, destroy);
  std::abort();  // never reached: the real __cxa_throw does not return
}

const saloon::json& saloon::Decision::observation() const {
  if (!observation_) {
    json parsed = json::parse(observation_json, nullptr, false);
    if (parsed.is_discarded()) throw std::invalid_argument("the observation is not JSON");
    observation_ = std::move(parsed);
  }
  return *observation_;
}

void saloon::Decision::note(const std::string& text) const {
  std::fflush(stdout);
  std::cerr << "note: " << text << std::endl;
}

int main(int argc, char** argv) {
  std::string socket;
  std::string name = "cpp bot";
  int port = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage();
    if (arg == "--socket") {
      socket = argv[++i];
    } else if (arg == "--port") {
      port = std::atoi(argv[++i]);
    } else if (arg == "--name") {
      name = argv[++i];
    } else {
      usage();
    }
  }
  if (socket.empty() == (port < 0)) usage();
  if (!socket.empty()) {
    // The runtime is up: from here on the clock is the bot's. Written atomically.
    std::string marker = socket + ".loading";
    std::string text = std::to_string(::getpid()) + "\n";
    int fd = ::open((marker + ".tmp").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      write_all(fd, text.data(), text.size());
      ::close(fd);
      ::rename((marker + ".tmp").c_str(), marker.c_str());
    }
  }
  // SIGTERM and SIGINT are waited for by one thread (blocked in every other).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  capture_output();
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) ::signal(sig, on_fatal);
  symbols();  // the program's debug info read now, on the start clock

  std::string address;
  if (!socket.empty()) {
    ::unlink(socket.c_str());
    address = "unix:" + socket;
  } else {
    address = "127.0.0.1:" + std::to_string(port);
  }
  BotService service(name);
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound);
  builder.SetMaxReceiveMessageSize(kMaxRefereeMessageBytes);
  builder.SetMaxSendMessageSize(kMaxBotMessageBytes);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "saloon runtime: cannot serve on " << address << std::endl;
    flush_output();
    return 1;
  }
  if (port >= 0) std::cerr << "saloon runtime: serving on 127.0.0.1:" << bound << std::endl;
  std::thread waiter([&server, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  });
  server->Wait();
  waiter.join();
  flush_output();
  return 0;
}
