#include "tc/Bench/Subprocess.h"
#include "tc/Support/Error.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include <chrono>
#include <optional>

namespace tc::bench {

namespace {
// A temporary file that is removed when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  explicit TempFile(const char *suffix) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tc-bench", suffix, path))
      fail("cannot create a temporary file: ", ec.message());
  }
  ~TempFile() { llvm::sys::fs::remove(path); }
  std::string read() const {
    auto buf = llvm::MemoryBuffer::getFile(path);
    return buf ? (*buf)->getBuffer().str() : std::string();
  }
};

std::string trimLine(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  // Long lines (an error naming many ops) are cut: the table is for reading.
  if (s.size() > 400)
    s = s.substr(0, 397) + "...";
  return s;
}
} // namespace

std::string ProcessResult::errorLine() const {
  if (timedOut)
    return "timed out after " + std::to_string(int(wallSeconds + 0.5)) + " s";
  std::string last, withError;
  size_t start = 0;
  while (start < err.size()) {
    size_t nl = err.find('\n', start);
    std::string line = err.substr(start, nl == std::string::npos ? nl : nl - start);
    if (!trimLine(line).empty()) {
      last = line;
      if (line.find("error:") != std::string::npos)
        withError = line;
    }
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
  std::string line = trimLine(withError.empty() ? last : withError);
  if (crashed)
    return failure + (line.empty() ? "" : " (" + line + ")");
  if (line.empty())
    return "exit code " + std::to_string(exitCode);
  return line;
}

ProcessResult runProcess(const std::vector<std::string> &argv, unsigned timeoutSeconds) {
  TempFile out(".out"), err(".err");
  std::vector<llvm::StringRef> args(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out.path),
                                                llvm::StringRef(err.path)};
  std::optional<llvm::sys::ProcessStatistics> stats;
  std::string message;
  bool notStarted = false;
  // ExecuteAndWait wants a path: a bare name ("python3") is looked up in PATH.
  std::string program = argv.at(0);
  if (program.find('/') == std::string::npos)
    if (auto found = llvm::sys::findProgramByName(program))
      program = *found;
  auto t0 = std::chrono::steady_clock::now();
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects, timeoutSeconds,
                                     /*MemoryLimit=*/0, &message, &notStarted, &stats);
  ProcessResult r;
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.out = out.read();
  r.err = err.read();
  if (stats)
    r.peakRssBytes = stats->PeakMemory * 1024;
  // ExecuteAndWait: -1 = could not run, -2 = killed (by our alarm: "Child
  // timed out", else by a signal: the signal's name).
  if (notStarted || rc == -1) {
    r.crashed = true;
    r.failure = "cannot run " + argv[0] + ": " + message;
  } else if (rc == -2) {
    r.timedOut = message.find("timed out") != std::string::npos;
    r.crashed = !r.timedOut;
    r.failure = "crashed: " + message;
  }
  r.exitCode = rc;
  return r;
}

} // namespace tc::bench
