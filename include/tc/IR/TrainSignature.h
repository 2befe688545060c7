// What makes a module a training module, read and written in one place.
// The record lives in the module's metadata (key "tc.train"), so it travels
// through .tcir, .tcbc and the artifact unchanged:
//   main(inputs..., state...) -> (loss, [gradients...], [new state...])
//   - the last `state` arguments of main are state: parameters first
//     (`params` of them), then buffers (`buffers`: batch norm's running
//     statistics), then optimizer state (moments, the step counter);
//   - before an optimizer, main's last `buffers` results are the buffers'
//     new values;
//   - after autodiff, results 1..`grads` are the gradients of the first
//     `grads` parameters;
//   - in a full train step (`step`), main's last `state` results are the
//     state's new values, in the same order (tc-run and the C API feed
//     them back as the next call's state);
//   - function @init (no arguments) returns the state's initial values in
//     the same order;
//   - metadata "tc.train.keys" names each state value, one per line: the
//     ONNX initializer's name for parameters and buffers (the checkpoint
//     keys a PyTorch state_dict uses), "<param>.exp_avg" ... for the
//     optimizer's; with gradient accumulation, "optimizer.micro_step" and
//     "<param>.grad_accum" (the micro-batches' gradient sums); "rng.seed" /
//     "rng.offset" for training dropout's RNG.
#pragma once
#include "tc/IR/IR.h"
#include <optional>
#include <string>

namespace tc {

struct TrainSignature {
  size_t state = 0;   // trailing arguments of main that are state
  size_t params = 0;  // the first `params` of them are trained parameters
  size_t buffers = 0; // then buffers, updated by the forward
  size_t grads = 0;   // results 1..grads are gradients (0 once an optimizer consumed them)
  bool step = false;  // main's last `state` results are the new state
  // Calls per update (append-optimizer{accumulate}): a step is this many
  // calls, one micro-batch each.
  size_t accumulate = 1;
  // An eval step (tc-opt --eval): main(inputs..., target, params...,
  // buffers...) -> (loss, metrics..., model outputs...); nothing is updated.
  // `metrics` results follow the loss (cross-entropy: the top-1 hits and
  // the labels counted, both f32[]).
  bool eval = false;
  size_t metrics = 0;
};

inline constexpr const char *kTrainMetadataKey = "tc.train";
inline constexpr const char *kTrainKeysMetadataKey = "tc.train.keys";
inline constexpr const char *kTrainInitFunction = "init";
// Written by tc-import: the ONNX names of the model's weights (float
// initializers of 2+ elements), one per line. train-state trains only
// these: an exporter's Constant nodes and what import folds are no
// parameters. A module without it (hand-written IR) trains every float
// constant of 2+ elements.
inline constexpr const char *kWeightsMetadataKey = "tc.weights";
// An ONNX model's metadata_props entry tc-import keeps: the ONNX names of
// float initializers that are not trained (PyTorch's buffers and parameters
// without requires_grad: ESM's rotary inv_freq, Whisper's positional table),
// one per line. train-state leaves them constants, as --freeze would.
inline constexpr const char *kFrozenMetadataKey = "tc.frozen";
// The node name of append-loss's ops (their file stays the model's), which
// lower-losses' ops and their gradients (autodiff copies a location) carry
// too: tc-prof shows the loss as a node of its own, and mixed-precision runs
// it in f32, as autocast runs a loss (its gradient seed, the loss scale,
// 65536 at first, is past f16's largest value).
inline constexpr const char *kLossNode = "(loss)";
// fp16 training's state (autodiff{loss-scale}, consumed by append-optimizer).
inline constexpr const char *kLossScaleKey = "amp.loss_scale";
inline constexpr const char *kGrowthTrackerKey = "amp.growth_tracker";
// Training dropout's RNG (train-state, when main has a training Dropout):
// i64 scalars, the Philox seed and the step's offset, advanced by one each
// step by append-optimizer (tc/IR/Philox.h).
inline constexpr const char *kRngSeedKey = "rng.seed";
inline constexpr const char *kRngOffsetKey = "rng.offset";

// The module's record, checked against main and @init (a tc::Error naming
// the inconsistency otherwise); nullopt for an inference module.
std::optional<TrainSignature> trainSignature(const Module &m);
void setTrainSignature(Module &m, const TrainSignature &s);

// Derived state (weight-shadows): a value the step keeps beside its source
// state value, a function of it alone (a parameter's f16 copy: Cast of it),
// as (key, source key) pairs. @init gives zeros for it and a checkpoint
// never stores it: whoever starts the state derives it from the source
// (TrainCheckpoint.h initialTrainState, readTrainCheckpoint), so the two
// never disagree. Module metadata "tc.train.derived", one "key<TAB>source
// key" line each.
inline constexpr const char *kTrainDerivedMetadataKey = "tc.train.derived";
std::vector<std::pair<std::string, std::string>> derivedState(const Module &m);
void setDerivedState(Module &m, const std::vector<std::pair<std::string, std::string>> &derived);

// The state's initial-value function (created empty when `create`).
Function *trainInit(Module &m, bool create = false);
// The checkpoint key of each state value, in order.
std::vector<std::string> stateKeys(const Module &m);
void setStateKeys(Module &m, const std::vector<std::string> &keys);

} // namespace tc
