// What a traced run records, shared by the CPU and CUDA runtimes and read by
// tc-prof: the steps of the plan that ran (what each is, what it costs) and
// timed events on tracks. Times are microseconds of ONE clock: the steady
// clock since the RunTrace was made (device timestamps are converted to it).
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace tc {

// One step of a plan: an op of the specialized entry function (a Fused call
// or a single op), with its cost at the plan's sizes.
struct StepInfo {
  std::string result; // "%y": the step's first result
  std::string group;  // Fused callee ("fused_conv_relu_0") or op name ("Reshape")
  // How it ran: "kernel" (generated), "library" (oneDNN/cuBLASLt/cuDNN call,
  // maybe plus its epilogue kernel), "copy", "view" (nothing), "fallback"
  // (the reference kernels on the host).
  std::string kind;
  std::string detail;               // what ran it, e.g. "onednn conv jit:avx2 + 1 post-ops"
  std::vector<std::string> nodes;   // ONNX node names it came from, in order
  std::vector<std::string> opTypes; // their op types, distinct, in order
  std::string signature;            // "f32[8,64,56,56], f32[64] -> f32[8,64,56,56]"
  std::string dtype;                // the first result's
  uint64_t bytes = 0;               // operands read and results written, once each
  double flops = 0;                 // see Analysis/StepCost.h for the rules
  bool matrix = false;              // holds a MatMul/Gemm/Conv (matrix units' peak applies)
  std::string matrixDType;          // that op's input dtype ("f16": tensor cores)
  // A train step's phase: "forward", "backward" or "optimizer" (a fused
  // group's: the latest of its ops'); every step of an inference model's is
  // "forward".
  std::string phase = "forward";
};

struct TraceEvent {
  enum class Track : uint8_t {
    Host,   // the thread that runs the plan: one event per step, graph replay, run
    Worker, // CPU: a worker thread's share of a kernel (lane = thread index)
    Api,    // CUDA: a driver API call (launch, memcpy) as CUPTI saw it
    Device, // CUDA: a kernel or memcpy on the GPU (lane = stream)
  };
  Track track = Track::Host;
  unsigned lane = 0;
  std::string name;     // kernel name as the device reports it, or the host action
  std::string category; // "kernel", "library", "copy", "fallback", "graph", "memcpy", "run", ...
  int step = -1;        // index into RunTrace::steps; -1: not one step (a run, a copy)
  int run = -1;         // which traced run (0-based); -1: outside runs
  double startUs = 0, durUs = 0;
  uint64_t correlation = 0; // links an Api event to its Device events (0: none)
  std::string note;         // e.g. "attributed by order within a CUDA graph"
};

class RunTrace {
public:
  RunTrace() : epoch_(std::chrono::steady_clock::now()) {}
  double nowUs() const { return toUs(std::chrono::steady_clock::now()); }
  double toUs(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - epoch_).count();
  }
  void add(TraceEvent e) {
    std::lock_guard<std::mutex> lock(mutex_);
    events.push_back(std::move(e));
  }

  std::string backend; // the target's name (Targets.def)
  // The host enqueues work that a device runs on its own (a GPU): host and
  // device time overlap. Else the host runs the kernels itself.
  bool asyncDevice = false;
  std::string device;          // "NVIDIA H100 80GB HBM3", "x86-64 (2 threads)"
  std::string deviceNote;      // how device events were obtained ("CUPTI", "CUDA events", ...)
  std::vector<StepInfo> steps; // the plan of the traced runs
  std::vector<TraceEvent> events;
  int currentRun = -1; // set by the caller around each traced run

private:
  std::chrono::steady_clock::time_point epoch_;
  std::mutex mutex_;
};

} // namespace tc
