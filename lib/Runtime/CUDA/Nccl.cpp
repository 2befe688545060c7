// NCCL, opened at run time (tc/Runtime/DeviceRanks.h): the launcher's
// environment, communicators, and the collective steps of a plan
// (NcclCall.h). The few types used are declared here, as NCCL 2 defines
// them (nccl.h), so no NCCL header is needed to build.
#include "LibraryLoader.h"
#include "NcclCall.h"
#include "tc/IR/OpTable.h"
#include "tc/Runtime/DeviceRanks.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <thread>
#include <unistd.h>

namespace tc {

namespace {

constexpr size_t kUniqueIdBytes = 128;
struct UniqueId {
  char internal[kUniqueIdBytes];
};
using ncclComm = void *;
enum { kSuccess = 0 };
enum { kSum = 0, kMax = 2, kMin = 3 };

struct Api {
  int (*getUniqueId)(UniqueId *);
  int (*commInitRank)(ncclComm *, int, UniqueId, int);
  int (*commDestroy)(ncclComm);
  int (*commCount)(ncclComm, int *);
  int (*commUserRank)(ncclComm, int *);
  int (*allReduce)(const void *, void *, size_t, int, int, ncclComm, cuda::CUstream);
  int (*allGather)(const void *, void *, size_t, int, ncclComm, cuda::CUstream);
  int (*reduceScatter)(const void *, void *, size_t, int, int, ncclComm, cuda::CUstream);
  const char *(*errorString)(int);
  const char *(*lastError)(ncclComm); // optional (NCCL 2.13+)

  void check(int r, const char *call, ncclComm comm = nullptr) const {
    if (r == kSuccess)
      return;
    const char *detail = lastError ? lastError(comm) : nullptr;
    fail(call, ": ", errorString(r), " (", r, ")",
         detail && *detail ? std::string(": ") + detail : std::string());
  }
};

// Loaded once; a failed load is not cached (the error comes again).
const Api &api() {
  static const Api a = [] {
    void *lib = cuda::openLibrary("NCCL", {"libnccl.so.2", "libnccl.so"});
    Api a{};
    auto bind = [&](auto &fn, const char *name) { cuda::bindSymbol(lib, fn, name, "NCCL"); };
    bind(a.getUniqueId, "ncclGetUniqueId");
    bind(a.commInitRank, "ncclCommInitRank");
    bind(a.commDestroy, "ncclCommDestroy");
    bind(a.commCount, "ncclCommCount");
    bind(a.commUserRank, "ncclCommUserRank");
    bind(a.allReduce, "ncclAllReduce");
    bind(a.allGather, "ncclAllGather");
    bind(a.reduceScatter, "ncclReduceScatter");
    bind(a.errorString, "ncclGetErrorString");
    a.lastError = reinterpret_cast<const char *(*)(ncclComm)>(::dlsym(lib, "ncclGetLastError"));
    return a;
  }();
  return a;
}

UniqueId newUniqueId() {
  UniqueId id{};
  api().check(api().getUniqueId(&id), "ncclGetUniqueId");
  return id;
}

std::string toHex(const UniqueId &id) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  for (char c : id.internal) {
    s += digits[(unsigned char)c >> 4];
    s += digits[(unsigned char)c & 15];
  }
  return s;
}

UniqueId fromHex(const std::string &hex, const char *where) {
  if (hex.size() != 2 * kUniqueIdBytes)
    fail(where, ": an NCCL unique id is ", 2 * kUniqueIdBytes, " hex digits, not ", hex.size());
  UniqueId id{};
  for (size_t i = 0; i < kUniqueIdBytes; ++i) {
    unsigned v = 0;
    for (char c : hex.substr(2 * i, 2)) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0)
        fail(where, ": an NCCL unique id is hex digits (0-9, a-f), not '", c, "'");
      v = v * 16 + unsigned(d);
    }
    id.internal[i] = char(v);
  }
  return id;
}

// The first of `names` set in the environment, parsed as an integer >= 0;
// nullopt when none is set.
std::optional<int> envInt(std::initializer_list<const char *> names) {
  for (const char *n : names)
    if (const char *v = std::getenv(n)) {
      char *end = nullptr;
      long x = std::strtol(v, &end, 10);
      if (!*v || *end || x < 0 || x > 1 << 20)
        fail("the launcher's ", n, " is '", v, "': a rank or size is an integer >= 0");
      return int(x);
    }
  return std::nullopt;
}

// The id rank 0 writes to `path` (whole, by a rename), read by the others.
UniqueId idFromFile(const std::string &path, int rank) {
  if (rank == 0) {
    UniqueId id = newUniqueId();
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      out << toHex(id) << "\n";
      if (!out.flush())
        fail("TC_NCCL_ID_FILE ", path, ": cannot write ", tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      fail("TC_NCCL_ID_FILE ", path, ": cannot write it");
    return id;
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    std::ifstream in(path);
    std::string hex;
    if (in >> hex)
      return fromHex(hex, ("TC_NCCL_ID_FILE " + path).c_str());
    if (std::chrono::steady_clock::now() > until)
      fail("TC_NCCL_ID_FILE ", path, ": rank 0 wrote no id within 120 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace

int64_t rankGroupSize(const Module &m) {
  int64_t n = 0;
  for (const auto &fn : m.functions)
    for (const auto &op : fn->ops)
      if (isRankOp(op->kind))
        n = std::max(n, op->getInt("ranks"));
  return n;
}

std::optional<LaunchEnv> launchEnv() {
  std::optional<int> rank = envInt({"RANK", "OMPI_COMM_WORLD_RANK"});
  std::optional<int> size = envInt({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"});
  if (!rank && !size)
    return std::nullopt;
  if (!rank || !size)
    fail("the launcher set ", rank ? "RANK" : "WORLD_SIZE", " without ",
         rank ? "WORLD_SIZE" : "RANK", ": a process of a group needs both");
  if (*size < 1 || *rank >= *size)
    fail("the launcher's RANK ", *rank, " is not a rank of WORLD_SIZE ", *size);
  LaunchEnv e;
  e.rank = *rank;
  e.size = *size;
  e.localRank = envInt({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}).value_or(*rank);
  if (const char *id = std::getenv("TC_NCCL_ID"))
    e.idHex = id;
  if (const char *file = std::getenv("TC_NCCL_ID_FILE"))
    e.idFile = file;
  return e;
}

std::string ncclUniqueIdHex() { return toHex(newUniqueId()); }

NcclCommunicator::NcclCommunicator(const LaunchEnv &env) : rank_(env.rank), size_(env.size) {
  const Api &a = api();
  UniqueId id{};
  if (size_ == 1)
    id = newUniqueId();
  else if (!env.idHex.empty())
    id = fromHex(env.idHex, "TC_NCCL_ID");
  else if (!env.idFile.empty())
    id = idFromFile(env.idFile, rank_);
  else
    fail("a group of ", size_,
         " processes needs the NCCL unique id rank 0 made: set TC_NCCL_ID "
         "(hex) or TC_NCCL_ID_FILE (a path rank 0 writes), or start them with tc-run --gpus ",
         size_);
  ncclComm comm = nullptr;
  a.check(a.commInitRank(&comm, size_, id, rank_), "ncclCommInitRank");
  comm_ = comm;
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_)
    api().commDestroy(comm_);
}

void ncclCommInfo(void *comm, int &rank, int &size) {
  const Api &a = api();
  a.check(a.commUserRank(comm, &rank), "ncclCommUserRank", comm);
  a.check(a.commCount(comm, &size), "ncclCommCount", comm);
}

namespace cuda {

void CollectiveCall::run(CUstream stream) const {
  const Api &a = api();
  if (kind == OpKind::AllReduce)
    a.check(a.allReduce(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv), count,
                        dtype, redOp, comm, stream),
            "ncclAllReduce", comm);
  else if (kind == OpKind::AllGather)
    a.check(a.allGather(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv), count,
                        dtype, comm, stream),
            "ncclAllGather", comm);
  else
    a.check(a.reduceScatter(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
                            count, dtype, redOp, comm, stream),
            "ncclReduceScatter", comm);
}

CollectiveCall collectiveFor(const Op &op, CUdeviceptr send, CUdeviceptr recv, void *comm) {
  CollectiveCall c;
  c.kind = op.kind;
  c.send = send;
  c.recv = recv;
  c.comm = comm;
  const TensorType &in = op.operand(0)->type;
  DType t = in.dtype;
  // ncclDataType_t; bool moves as bytes (gathered, not reduced).
  static const std::map<DType, int> types = {{DType::I8, 0},   {DType::U8, 1},  {DType::I32, 2},
                                             {DType::U32, 3},  {DType::I64, 4}, {DType::U64, 5},
                                             {DType::F16, 6},  {DType::F32, 7}, {DType::F64, 8},
                                             {DType::BF16, 9}, {DType::Bool, 1}};
  auto it = types.find(t);
  if (it == types.end() || (t == DType::Bool && op.kind != OpKind::AllGather))
    fail(op.where(), ": NCCL has no ", op.name(), " of ", dtypeName(t));
  c.dtype = it->second;
  if (op.kind != OpKind::AllGather) {
    const std::string &how = op.getString("reduction");
    c.redOp = how == "sum" ? kSum : how == "max" ? kMax : kMin;
  }
  if (op.kind != OpKind::AllReduce) {
    int64_t axis = op.getInt("axis");
    for (int64_t a = 0; a < axis; ++a)
      if (in.shape[size_t(a)].size != 1)
        fail(op.where(), ": ", op.name(), " over axis ", axis,
             " with larger leading axes (lower-collectives makes it the leading one)");
  }
  const TensorType &small = op.kind == OpKind::ReduceScatter ? op.result()->type : in;
  c.count = size_t(staticNumElements(small.shape).value_or(0));
  return c;
}

} // namespace cuda

} // namespace tc
