// A collective op of a plan (AllReduce, AllGather, ReduceScatter over the
// leading axis: lower-collectives gives codegen no other) as one NCCL call
// on the plan's buffers, enqueued on the run's stream like a kernel (NCCL
// calls are captured into CUDA graphs).
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/CudaDriver.h"

namespace tc::cuda {

struct CollectiveCall {
  OpKind kind = OpKind::AllReduce;
  CUdeviceptr send = 0, recv = 0;
  // AllReduce: the elements; AllGather: each rank's part (the send buffer);
  // ReduceScatter: each rank's part (the receive buffer).
  size_t count = 0;
  int dtype = 0, redOp = 0; // ncclDataType_t, ncclRedOp_t
  void *comm = nullptr;     // ncclComm_t
  void run(CUstream stream) const;
};

// `op`'s call over `comm`, or a tc::Error saying why NCCL cannot run it
// (a dtype it lacks, an axis other than the leading one).
CollectiveCall collectiveFor(const Op &op, CUdeviceptr send, CUdeviceptr recv, void *comm);

} // namespace tc::cuda
