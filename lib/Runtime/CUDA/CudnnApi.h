// cuDNN's entry points as the runtime binds them (dlsym, CudnnConv.cpp), for
// the legacy calls (CudnnConv.cpp) and the graph API's (CudnnGraph.cpp).
// Only with cudnn.h (TC_HAVE_CUDNN).
#pragma once
#include "CudnnConv.h"
#include <cudnn.h>
#include <vector>

namespace tc::cuda::dnn {

struct Api {
  decltype(&cudnnGetVersion) version;
  decltype(&cudnnCreate) create;
  decltype(&cudnnDestroy) destroy;
  decltype(&cudnnSetStream) setStream;
  decltype(&cudnnGetErrorString) errorString;
  // The legacy API.
  decltype(&cudnnCreateTensorDescriptor) createTensor;
  decltype(&cudnnSetTensorNdDescriptor) setTensor;
  decltype(&cudnnDestroyTensorDescriptor) destroyTensor;
  decltype(&cudnnCreateFilterDescriptor) createFilter;
  decltype(&cudnnSetFilterNdDescriptor) setFilter;
  decltype(&cudnnDestroyFilterDescriptor) destroyFilter;
  decltype(&cudnnCreateConvolutionDescriptor) createConv;
  decltype(&cudnnSetConvolutionNdDescriptor) setConv;
  decltype(&cudnnSetConvolutionGroupCount) setGroups;
  decltype(&cudnnSetConvolutionMathType) setMath;
  decltype(&cudnnDestroyConvolutionDescriptor) destroyConv;
  decltype(&cudnnGetConvolutionNdForwardOutputDim) outputDim;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) algorithms;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) workspaceSize;
  decltype(&cudnnConvolutionForward) forward;
  decltype(&cudnnAddTensor) addTensor;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) dataAlgorithms;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) dataWorkspaceSize;
  decltype(&cudnnConvolutionBackwardData) backwardData;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) filterAlgorithms;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) filterWorkspaceSize;
  decltype(&cudnnConvolutionBackwardFilter) backwardFilter;
  // The graph (backend) API.
  decltype(&cudnnBackendCreateDescriptor) backendCreate;
  decltype(&cudnnBackendDestroyDescriptor) backendDestroy;
  decltype(&cudnnBackendSetAttribute) backendSet;
  decltype(&cudnnBackendGetAttribute) backendGet;
  decltype(&cudnnBackendFinalize) backendFinalize;
  decltype(&cudnnBackendExecute) backendExecute;

  // "call: CUDNN_STATUS_... (n)"
  std::string error(cudnnStatus_t s, const char *call) const;
  void check(cudnnStatus_t s, const char *call) const;
};

// Loaded once; a failed load is not cached (the error comes again).
const Api &api();

cudnnDataType_t dataType(DType t);

// Strides of dims `d` (cuDNN's order N, C, spatial...) packed in that order,
// or channels last (N, spatial..., C).
std::vector<int> packedStrides(const std::vector<int> &d, bool channelsLast);

// Algorithms and engines needing more workspace than this are passed over.
constexpr size_t kMaxWorkspace = size_t(256) << 20;

} // namespace tc::cuda::dnn

namespace tc::cuda {

// A graph-API plan (CudnnGraph.cpp), or why no engine took the graph.
struct Cudnn::GraphPlan {
  std::vector<cudnnBackendDescriptor_t> parts; // every descriptor the plan was made of
  cudnnBackendDescriptor_t plan = nullptr;     // nullptr: refused, and why
  std::string refusal;
  int64_t workspace = 0, engine = -1;
  std::string choice, rejected; // CallTuning's, for every step sharing the plan
  double us = 0;
  std::vector<int64_t> uids; // the variant pack's, in the order of Graph::pointers
  // Pass-by-value scalars (an attention's scale and -inf): the variant pack
  // points at them, so they live as long as the plan.
  float scalars[2] = {0, 0};
  // A real output the caller does not want (an attention's softmax
  // statistics, in a test variant): `scratchBytes` in the workspace's tail,
  // past the engine's own part; its pointer is Graph::pointers[scratchSlot].
  int64_t scratchBytes = 0;
  int scratchSlot = -1;
  int64_t workspaceBytes() const {
    return scratchBytes ? scratchOffset(workspace) + scratchBytes : workspace;
  }
  // Where the scratch output starts in a workspace of which the engine uses
  // `engineBytes` (256-aligned, as the engines align their own tensors).
  static int64_t scratchOffset(int64_t engineBytes) { return (engineBytes + 255) / 256 * 256; }
  ~GraphPlan();
};

// A graph-API call's step: the shared plan and this step's pointers, bound
// with the workspace into a variant pack (setWorkspace).
struct CudnnConv::Graph {
  cudnnHandle_t handle = nullptr;
  std::shared_ptr<Cudnn::GraphPlan> plan;
  std::vector<void *> pointers; // in the order of the plan's unique ids
  cudnnBackendDescriptor_t pack = nullptr;
  ~Graph();
  void bind(CUdeviceptr workspace);
  void run() const;
};

} // namespace tc::cuda
