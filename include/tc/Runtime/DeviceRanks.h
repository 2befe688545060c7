// Processes, one GPU each, whose artifacts' collectives meet (a tensor- or
// data-parallel program: Ops.def "Distributed", docs/multi-gpu.md) through
// NCCL, which is opened at run time (dlopen of libnccl.so.2) like the CUDA
// libraries: tools build and start without it.
//
// A process learns its place from the launcher's environment, as torchrun
// and mpirun set it: RANK / WORLD_SIZE / LOCAL_RANK (or OMPI_COMM_WORLD_RANK,
// _SIZE, _LOCAL_RANK), and the group's NCCL unique id from TC_NCCL_ID (its
// 128 bytes in hex; `tc-run --gpus N` makes one and starts N processes) or
// TC_NCCL_ID_FILE (a file rank 0 writes and the others wait for).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace tc {

class Module;

// The group size a module's collectives and RankSlices name (Ops.def
// "Distributed"); 0 when it has none.
int64_t rankGroupSize(const Module &m);

struct LaunchEnv {
  int rank = 0, size = 1, localRank = 0; // localRank: the GPU this process takes
  std::string idHex;                     // TC_NCCL_ID
  std::string idFile;                    // TC_NCCL_ID_FILE
};

// The launcher's variables, checked (a rank outside [0, size), a size
// without a rank: one tc::Error line naming the variable); nullopt when none
// is set (a single process).
std::optional<LaunchEnv> launchEnv();

// A new NCCL unique id in hex (libnccl opened; tc::Error without it).
std::string ncclUniqueIdHex();

// An NCCL communicator: made from a launch (rank, size, the unique id) on the
// calling thread's current CUDA device, or a 1-rank one; destroyed with it.
class NcclCommunicator {
public:
  // The id from env.idHex, or env.idFile (rank 0 writes a new id there, the
  // others wait up to 120 s for it); a 1-rank group needs neither.
  explicit NcclCommunicator(const LaunchEnv &env);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;
  void *handle() const { return comm_; } // ncclComm_t
  int rank() const { return rank_; }
  int size() const { return size_; }

private:
  void *comm_ = nullptr;
  int rank_ = 0, size_ = 1;
};

// The rank and size of a caller's communicator (an ncclComm_t).
void ncclCommInfo(void *comm, int &rank, int &size);

} // namespace tc
