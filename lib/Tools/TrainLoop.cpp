// tc-run --train (tc/Tools/TrainLoop.h).
#include "tc/Tools/TrainLoop.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/Ranks.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/RunBuffers.h"
#include "tc/Runtime/RunHarness.h"
#include "tc/Runtime/TrainCheckpoint.h"
#include "tc/Support/Error.h"
#include "tc/Support/Hash64.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>

namespace tc::tools {

namespace fs = std::filesystem;

namespace {

// Every batch of the folder: its test_data_set_* subfolders in name order,
// or the folder itself.
std::vector<std::vector<HostTensor>> loadBatches(const Function &inputsOnly,
                                                 const std::string &dir) {
  if (!fs::is_directory(dir))
    fail("--data ", dir, ": not a folder");
  std::vector<std::string> sets;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  if (sets.empty())
    sets.push_back(dir);
  std::vector<std::vector<HostTensor>> batches;
  for (const std::string &s : sets) {
    InputSources src;
    src.dir = s;
    batches.push_back(gatherInputs(inputsOnly, src));
  }
  return batches;
}

// The arguments before the state (the model's inputs and the target).
Function inputsOf(const Function &f, const TrainSignature &sig) {
  Function inputsOnly;
  inputsOnly.args.assign(f.args.begin(), f.args.end() - std::ptrdiff_t(sig.state));
  return inputsOnly;
}

// The state to start from: a checkpoint's, read and checked whole before
// anything runs, or @init's.
std::vector<HostTensor> initialState(const Module &m, const TrainStateLayout &layout,
                                     const std::string &resume) {
  return resume.empty() ? initialTrainState(m, layout) : readTrainCheckpoint(resume, layout);
}

// One run of main, compiled (`exe`) or on the reference executor; `outs`
// filled as Executable::runOn fills them.
void runMain(const Module &m, Executable *exe, const std::vector<RunInput> &in,
             std::vector<RunOutput> &outs) {
  if (exe) {
    exe->runOn(nullptr, in, outs);
    return;
  }
  std::vector<HostTensor> hostIn;
  for (const RunInput &i : in)
    hostIn.push_back(*i.host);
  std::vector<HostTensor> res = runReference(&m, m.main(), hostIn);
  for (size_t r = 0; r < outs.size(); ++r)
    outs[r].host = std::move(res[r]);
}

// One pass of an eval step over `batches` on `state` (its layout's order).
struct EvalResult {
  size_t batches = 0;
  int64_t samples = 0;
  double loss = 0, hits = 0, counted = 0;
  bool topOne = false;
};

EvalResult evaluate(const Module &m, Executable *exe, const TrainSignature &sig,
                    const std::vector<std::vector<HostTensor>> &batches,
                    const std::vector<HostTensor> &state) {
  const Function &f = m.main();
  size_t numInputs = f.args.size() - sig.state;
  EvalResult r;
  for (const std::vector<HostTensor> &batch : batches) {
    std::vector<RunInput> in(f.args.size());
    for (size_t i = 0; i < in.size(); ++i)
      in[i].host = i < numInputs ? &batch[i] : &state[i - numInputs];
    std::vector<RunOutput> outs(f.results.size());
    runMain(m, exe, in, outs);
    r.loss += outs[0].host.getDouble(0);
    if (sig.metrics == 2) {
      r.hits += outs[1].host.getDouble(0);
      r.counted += outs[2].host.getDouble(0);
    }
    r.samples += batch.empty() || batch[0].shape().empty() ? 1 : batch[0].shape()[0];
  }
  r.batches = batches.size();
  r.loss /= double(batches.size());
  r.topOne = sig.metrics == 2;
  if (!std::isfinite(r.loss))
    fail("--eval: the loss is ", r.loss);
  return r;
}

void printEval(const std::string &prefix, const EvalResult &r) {
  std::cout << prefix << r.batches << " batches, " << r.samples << " samples  loss "
            << std::setprecision(6) << r.loss;
  if (r.topOne)
    std::cout << "  top-1 " << std::setprecision(4) << (r.counted > 0 ? r.hits / r.counted : 0.0)
              << " (" << int64_t(r.hits) << "/" << int64_t(r.counted) << ")";
  std::cout << "\n" << std::flush;
}

// The eval step's signature; one line naming what the module is otherwise.
TrainSignature evalSignature(const Module &m, const char *flag) {
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!sig || !sig->eval)
    fail(flag, " needs an eval step (tc-opt --eval): this module ",
         sig ? "is a train step" : "does not train");
  return *sig;
}

} // namespace

int runEvalLoop(const Module &m, Executable *exe, const TrainOptions &opts) {
  TrainSignature sig = evalSignature(m, "--eval");
  if (opts.data.empty())
    fail("--eval needs --data DIR");
  Function inputsOnly = inputsOf(m.main(), sig);
  std::vector<std::vector<HostTensor>> batches = loadBatches(inputsOnly, opts.data);
  std::vector<HostTensor> state = initialState(m, trainStateLayout(m, sig), opts.resume);
  printEval("eval: ", evaluate(m, exe, sig, batches, state));
  return 0;
}

// Every rank's state after a data-parallel run against rank 0's, by a hash
// of each tensor's bytes: one line naming the first that differs.
static void checkSameState(const std::vector<HostTensor> &state, const TrainStateLayout &layout,
                           RankGroup &group, int rank) {
  HostTensor sums(DType::I64, {int64_t(state.size())});
  for (size_t i = 0; i < state.size(); ++i)
    sums.data<int64_t>()[i] = int64_t(hash64(
        std::string_view(reinterpret_cast<const char *>(state[i].bytes()), state[i].byteSize())));
  auto all = group.exchange(rank, sums, "the state after training");
  for (size_t r = 1; r < all->size(); ++r)
    for (size_t i = 0; i < state.size(); ++i)
      if ((*all)[r].data<int64_t>()[i] != (*all)[0].data<int64_t>()[i])
        fail("--train --ranks: rank ", r, "'s state '", layout.keys[i],
             "' differs from rank 0's after training (a step that is not data-parallel?)");
}

int runTrainLoop(const Module &m, Executable *exe, const TrainOptions &opts) {
  std::optional<TrainSignature> sig = trainSignature(m);
  if (!sig || !sig->step)
    fail("--train needs a train step (tc-opt --train): this module ",
         !sig        ? "does not train"
         : sig->eval ? "is an eval step (tc-run --eval)"
                     : "has no optimizer");
  TrainStateLayout layout = trainStateLayout(m, *sig);
  const Function &f = m.main();
  Function inputsOnly = inputsOf(f, *sig);
  if (opts.data.empty())
    fail("--train needs --data DIR (test_data_set_* folders of ", inputsOnly.args.size(),
         " inputs each)");
  std::vector<std::vector<HostTensor>> batches = loadBatches(inputsOnly, opts.data);

  std::vector<HostTensor> state = initialState(m, layout, opts.resume);

  // Evaluations: the eval step's state taken from the train state by key
  // (checked now, before any step), its batches loaded once.
  std::optional<TrainSignature> evalSig;
  std::vector<size_t> evalFrom; // the train state index of each eval state tensor
  std::vector<std::vector<HostTensor>> evalBatches;
  if (opts.evalModule) {
    evalSig = evalSignature(*opts.evalModule, "--eval-model");
    TrainStateLayout evalLayout = trainStateLayout(*opts.evalModule, *evalSig);
    const Function &ef = opts.evalModule->main();
    for (size_t i = 0; i < evalLayout.keys.size(); ++i) {
      auto at = std::find(layout.keys.begin(), layout.keys.end(), evalLayout.keys[i]);
      const TensorType &want = ef.args[ef.args.size() - evalSig->state + i]->type;
      if (at == layout.keys.end())
        fail("--eval-model: its state '", evalLayout.keys[i], "' is not in the train step's");
      size_t j = size_t(at - layout.keys.begin());
      const TensorType &have = f.args[f.args.size() - sig->state + j]->type;
      if (have != want)
        fail("--eval-model: its state '", evalLayout.keys[i], "' is ", want.str(),
             ", the train step's ", have.str());
      evalFrom.push_back(j);
    }
    evalBatches =
        loadBatches(inputsOf(ef, *evalSig), opts.evalData.empty() ? opts.data : opts.evalData);
  }
  auto evaluateAt = [&](int step) {
    std::vector<HostTensor> evalState;
    for (size_t j : evalFrom)
      evalState.push_back(state[j]);
    printEval("eval at step " + std::to_string(step) + ": ",
              evaluate(*opts.evalModule, opts.evalExe, *evalSig, evalBatches, evalState));
  };

  // A step is `accumulate` calls, one micro-batch each. A resumed run goes
  // on with the batch after the last one trained.
  size_t perStep = sig->accumulate, done = 0;
  for (size_t i = 0; i < layout.keys.size(); ++i) {
    size_t v = size_t(std::max(0.0, state[i].getDouble(0)));
    if (layout.keys[i] == "optimizer.step")
      done += v * perStep;
    else if (layout.keys[i] == "optimizer.micro_step")
      done += v;
  }
  int logEvery = opts.logEvery > 0 ? opts.logEvery : std::max(1, opts.steps / 10);
  // On simulated ranks (tc-run --ranks N: a data-parallel step), rank r's
  // k-th micro-batch is the data's k * N + r, so N ranks see what one rank
  // accumulating N micro-batches would; rank 0 alone speaks and writes.
  const RankContext &rc = currentRank();
  size_t ranks = size_t(rc.size), rank = size_t(rc.rank);
  bool speaks = rank == 0;
  int64_t samples =
      (batches[0].empty() || batches[0][0].shape().empty() ? 1 : batches[0][0].shape()[0]) *
      int64_t(perStep * ranks);
  auto t0 = std::chrono::steady_clock::now();
  auto lastLog = t0;
  size_t n = f.args.size(), numInputs = n - sig->state, numResults = f.results.size();
  std::vector<RunInput> in(n);
  for (size_t j = 0; j < sig->state; ++j)
    in[numInputs + j].host = &state[j];
  // With the state on the device, the batches go there too, once (up to
  // kResidentBatchBytes in all), as a PyTorch loop keeps its batches on the
  // GPU: a step then copies its batch device to device, not from pageable
  // host memory (19 MB a vit_b_16 b32 step: 2.5 ms of ~22).
  constexpr size_t kResidentBatchBytes = size_t(2) << 30;
  size_t batchBytes = 0;
  for (const std::vector<HostTensor> &b : batches)
    for (const HostTensor &t : b)
      batchBytes += t.byteSize();
  std::vector<std::vector<RunInput>> resident;
  if (opts.deviceState && exe && batchBytes <= kResidentBatchBytes)
    for (const std::vector<HostTensor> &b : batches) {
      std::vector<RunInput> &r = resident.emplace_back();
      for (const HostTensor &t : b)
        if (DeviceAddress at = exe->keepOnDevice(t))
          r.push_back(RunInput{nullptr, t.dtype(), t.shape(), at, t.byteSize()});
      if (r.size() != b.size()) {
        resident.clear();
        break;
      }
    }
  // fp16's dynamic loss scale, printed with each logged loss (4 bytes read
  // back then): a scale that halved says a step overflowed and was skipped,
  // as PyTorch's scaler.get_scale() tells.
  std::optional<size_t> scaleAt;
  for (size_t j = 0; j < layout.keys.size(); ++j)
    if (layout.keys[j] == kLossScaleKey && state[j].dtype() == DType::F32 &&
        state[j].numElements() == 1)
      scaleAt = j;
  double scale = 0;
  // One call: the loss comes back to the host only when `logged`, the state
  // only when `saving` (or always, without device state).
  auto call = [&](size_t b, bool logged, bool saving) {
    for (size_t i = 0; i < numInputs; ++i) {
      in[i] = RunInput{};
      if (resident.empty())
        in[i].host = &batches[b][i];
      else
        in[i] = resident[b][i];
    }
    std::vector<RunOutput> outs(numResults);
    auto place = [&](bool host) {
      return host || !opts.deviceState ? RunOutput::To::Host : RunOutput::To::ModelDevice;
    };
    for (size_t r = 0; r < numResults; ++r)
      outs[r].to = place(r == 0 ? logged : saving);
    runMain(m, exe, in, outs);
    for (size_t j = 0; j < sig->state; ++j) {
      RunOutput &o = outs[numResults - sig->state + j];
      if (o.to == RunOutput::To::ModelDevice) {
        in[numInputs + j] = nextRunInput(o, f.args[numInputs + j]->type.dtype);
      } else {
        state[j] = std::move(o.host);
        in[numInputs + j] = RunInput{};
        in[numInputs + j].host = &state[j];
      }
    }
    if (logged && scaleAt) {
      const RunOutput &o = outs[numResults - sig->state + *scaleAt];
      float v = 0;
      if (o.to == RunOutput::To::ModelDevice)
        exe->copyToHost(nullptr, o.device, &v, sizeof v);
      else
        v = float(state[*scaleAt].getDouble(0));
      scale = v;
    }
    return logged ? outs[0].host.getDouble(0) : 0.0;
  };
  for (int step = 1; step <= opts.steps; ++step) {
    bool logged = step % logEvery == 0 || step == opts.steps;
    bool evaluating = opts.evalModule &&
                      (step == opts.steps || (opts.evalEvery > 0 && step % opts.evalEvery == 0));
    bool checkpointing =
        !opts.checkpoint.empty() && opts.checkpointEvery > 0 && step % opts.checkpointEvery == 0;
    bool saving = step == opts.steps || evaluating || checkpointing;
    // A logged step's loss is its micro-batches' mean.
    double loss = 0;
    for (size_t k = 0; k < perStep; ++k, ++done)
      loss += call((done * ranks + rank) % batches.size(), logged, saving && k + 1 == perStep) /
              double(perStep);
    if (!speaks)
      continue;
    if (checkpointing && step != opts.steps) // the last step's is written below
      writeTrainCheckpoint(opts.checkpoint, layout, state);
    if (!logged) {    // the loss stays on the device: no sync
      if (evaluating) // the state came to the host (`saving`)
        evaluateAt(step);
      continue;
    }
    if (!std::isfinite(loss))
      fail("--train: the loss is ", loss, " at step ", step, " (state not saved)");
    auto now = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(now - lastLog).count();
    int stepsInWindow = step % logEvery == 0 ? logEvery : step % logEvery;
    std::cout << "step " << step << "/" << opts.steps << "  loss " << std::setprecision(6) << loss
              << "  " << std::setprecision(4)
              << double(stepsInWindow * samples) / std::max(secs, 1e-9) << " samples/s";
    if (scaleAt)
      std::cout << "  loss scale " << std::setprecision(6) << scale;
    std::cout << "\n" << std::flush;
    if (evaluating)
      evaluateAt(step);
    lastLog = std::chrono::steady_clock::now(); // the evaluation is not the window's
  }
  if (rc.group) // the same updates from the same state: the same state on every rank
    checkSameState(state, layout, *rc.group, int(rank));
  if (!speaks)
    return 0;
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "tc-run: trained " << opts.steps << " steps of " << samples << " samples in "
            << std::setprecision(4) << total << " s ("
            << double(opts.steps) * double(samples) / std::max(total, 1e-9) << " samples/s, "
            << (exe ? "compiled" : "reference executor");
  if (exe && exe->peakDeviceBytes())
    std::cerr << ", peak device memory " << double(exe->peakDeviceBytes()) / (1 << 20) << " MiB";
  std::cerr << (opts.deviceState ? ", state on the device" : "")
            << (resident.empty() ? "" : ", batches on the device") << ")\n";
  if (!opts.checkpoint.empty()) {
    writeTrainCheckpoint(opts.checkpoint, layout, state);
    std::cerr << "tc-run: wrote " << opts.checkpoint << " and "
              << optimizerCheckpointPath(opts.checkpoint) << "\n";
  }
  return 0;
}

} // namespace tc::tools
