#include "tc/Tools/GpuLauncher.h"
#include "tc/Runtime/DeviceRanks.h"
#include "tc/Support/Error.h"
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace tc::tools {

namespace {

// argv without "--gpus N" / "--gpus=N".
std::vector<std::string> withoutGpus(int argc, char **argv) {
  std::vector<std::string> out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--gpus") {
      ++i;
      continue;
    }
    if (a.rfind("--gpus=", 0) == 0)
      continue;
    out.push_back(a);
  }
  return out;
}

std::string describe(int status) {
  if (WIFEXITED(status))
    return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return std::string("stopped by signal ") + strsignal(WTERMSIG(status));
  return "stopped";
}

} // namespace

int runOnGpus(int n, int argc, char **argv) {
  if (launchEnv())
    fail("--gpus starts the ranks itself: not within a launcher's process (RANK and WORLD_SIZE "
         "are set)");
  std::string id = ncclUniqueIdHex(); // this process serves its bootstrap
  std::vector<std::string> args = withoutGpus(argc, argv);
  char dir[] = "/tmp/tc-run-ranks-XXXXXX";
  if (!mkdtemp(dir))
    fail("--gpus: cannot make a directory for the ranks' logs under /tmp");
  auto logOf = [&](int r) { return std::string(dir) + "/rank" + std::to_string(r) + ".err"; };
  std::cout.flush();
  std::cerr.flush();
  std::vector<pid_t> pids(size_t(n), -1);
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid < 0)
      fail("--gpus: cannot start rank ", r, ": ", std::strerror(errno));
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("TC_NCCL_ID", id.c_str(), 1);
      unsetenv("TC_NCCL_ID_FILE");
      if (r > 0) {
        int null = open("/dev/null", O_WRONLY);
        int err = open(logOf(r).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (null >= 0)
          dup2(null, 1);
        if (err >= 0)
          dup2(err, 2);
      }
      std::vector<char *> cargs;
      for (std::string &a : args)
        cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      std::fprintf(stderr, "%s: error: --gpus: cannot start rank %d: %s\n", args[0].c_str(), r,
                   std::strerror(errno));
      _exit(127);
    }
    pids[size_t(r)] = pid;
  }
  // Wait for all. A rank that fails gives the others a grace period to end
  // on their own (rank 0 says its own error or its outputs' mismatch), then
  // stops the rest (SIGTERM, then SIGKILL): a rank waiting at a collective a
  // dead rank never reaches is no hang.
  std::vector<int> status(size_t(n), 0);
  int running = n, failedRank = -1;
  auto reap = [&](bool block) {
    int st = 0;
    pid_t p = waitpid(-1, &st, block ? 0 : WNOHANG);
    if (p <= 0)
      return p;
    for (int i = 0; i < n; ++i)
      if (pids[size_t(i)] == p) {
        pids[size_t(i)] = -1;
        status[size_t(i)] = st;
        --running;
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0) && failedRank < 0)
          failedRank = i;
      }
    return p;
  };
  auto waitUntil = [&](std::chrono::steady_clock::time_point until) {
    while (running > 0 && std::chrono::steady_clock::now() < until)
      if (reap(false) <= 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  auto signalAll = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0)
        kill(p, sig);
  };
  while (running > 0 && failedRank < 0)
    if (reap(true) < 0)
      break;
  if (running > 0) {
    using namespace std::chrono;
    waitUntil(steady_clock::now() + seconds(failedRank == 0 ? 0 : 10));
    signalAll(SIGTERM);
    waitUntil(steady_clock::now() + seconds(5));
    signalAll(SIGKILL);
    while (running > 0 && reap(true) > 0) {
    }
  }
  // Rank 0's own lines are on our stderr already: where it ended with an
  // error of its own, its exit code says the rest; else the first rank that
  // failed, its lines prefixed, and one line naming it.
  const int status0 = status[0];
  bool zeroSaid = WIFEXITED(status0) && WEXITSTATUS(status0) != 0;
  if (failedRank > 0 && !zeroSaid) {
    std::ifstream log(logOf(failedRank));
    for (std::string line; std::getline(log, line);)
      std::cerr << "rank " << failedRank << ": " << line << "\n";
  }
  for (int r = 1; r < n; ++r)
    std::remove(logOf(r).c_str());
  rmdir(dir);
  if (failedRank >= 0 && zeroSaid)
    return WEXITSTATUS(status0);
  if (failedRank >= 0)
    fail("--gpus ", n, ": rank ", failedRank, " ", describe(status[size_t(failedRank)]),
         n > 1 ? "; the other ranks were stopped" : "");
  return 0;
}

} // namespace tc::tools
