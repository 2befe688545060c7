// The C API (include/tc/Runtime/tc_runtime.h) over the runtime half of the
// target registry (tc/Target/Executable.h): an artifact's header names its
// target, whose loader gives the Executable every call goes through. C++
// errors become -1/NULL and a per-thread message.
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/IR.h"
#include "tc/IR/TrainSignature.h"
#include "tc/Runtime/RefExecutor.h"
#include "tc/Runtime/TrainCheckpoint.h"
#include "tc/Runtime/tc_runtime.h"
#include "tc/Support/Error.h"
#include "tc/Target/Executable.h"
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

// The memory field sits in what was padding after `rank` in version 1, so
// a program built against that header keeps its layout (LP64).
static_assert(sizeof(void *) != 8 || (offsetof(tc_tensor, dims) == 16 && sizeof(tc_tensor) == 96),
              "tc_tensor's layout changed");

struct tc_model {
  const tc::RuntimeTarget *target = nullptr; // the artifact's
  std::unique_ptr<tc::Executable> exe;
  std::vector<tc::HostTensor> outputs; // host outputs of the last run

  const tc::Function &main() const { return exe->module().main(); }
};

// A train step's model and its state, where the model runs: host tensors
// (a CPU model; a CUDA model's until its first step and after a load), or
// the last step's outputs left in a CUDA model's device memory (valid until
// its next run, which copies its device inputs first: feeding them back is
// safe).
struct tc_trainer {
  std::unique_ptr<tc_model> model;
  tc::TrainStateLayout layout;
  size_t batchInputs = 0;            // main's arguments before the state
  std::vector<tc::HostTensor> host;  // the state on the host, when !onDevice
  std::vector<tc::RunOutput> device; // the state on the device, when onDevice
  bool onDevice = false;
  void *stream = nullptr; // the last step's (reads copy on it)
  std::string lost;       // why the state is gone ("": it is not)
};

namespace {

// tc_tensor.memory as the caller wrote it: a C program may store any int
// there, and loading one outside the enum's values as a tc_memory is
// undefined in C++, so the bytes are read as an int.
int memoryOf(const tc_tensor &t) {
  static_assert(sizeof(t.memory) == sizeof(int));
  int m;
  std::memcpy(&m, &t.memory, sizeof m);
  return m;
}

thread_local std::string lastError;

template <typename F> auto guarded(F &&f, decltype(f()) onError) {
  try {
    lastError.clear();
    return f();
  } catch (const std::exception &e) {
    lastError = e.what();
  } catch (...) {
    lastError = "unknown error";
  }
  return onError;
}

// A getter's bad argument: the message, and -1.
int bad(std::string message) {
  lastError = std::move(message);
  return -1;
}

void describe(const tc::Value *v, const char **name, tc_tensor *type) {
  if (name)
    *name = v->name.c_str();
  if (!type)
    return;
  *type = tc_tensor{};
  type->dtype = tc::dtypeName(v->type.dtype).data();
  type->rank = int(v->type.rank());
  for (size_t d = 0; d < v->type.rank() && d < TC_MAX_RANK; ++d)
    type->dims[d] = v->type.shape[d].isStatic() ? v->type.shape[d].size : -1;
}

// Options as the caller's header version laid them out: a shorter struct
// is refused (none predates version 2), a longer one (a newer header)
// only with its unknown fields zero, their defaults.
// Options of this version, or of version 2 (without no_verify: it verifies),
// or of a later one that leaves the fields this library lacks zero.
tc_load_options readOptions(const tc_load_options *given) {
  tc_load_options o = TC_LOAD_OPTIONS_INIT;
  if (!given)
    return o;
  constexpr size_t kVersion2 = offsetof(tc_load_options, no_verify);
  if (given->size < kVersion2)
    tc::fail("tc_model_load_ex: options of ", given->size,
             " bytes; set size = sizeof(tc_load_options) (", sizeof o, ")");
  const auto *bytes = reinterpret_cast<const unsigned char *>(given);
  for (size_t i = sizeof o; i < given->size; ++i)
    if (bytes[i])
      tc::fail("tc_model_load_ex: options from a newer tc_runtime.h (", given->size,
               " bytes) set fields this library (version ", TC_RUNTIME_API_VERSION,
               ") does not know");
  std::memcpy(&o, given, std::min(given->size, sizeof o));
  o.size = sizeof o;
  return o;
}

// tc_model_load_ex's work (`who`: the call, named when the path is NULL).
std::unique_ptr<tc_model> loadModel(const char *who, const char *path,
                                    const tc_load_options *options) {
  if (!path)
    tc::fail(who, ": path is NULL");
  tc_load_options o = readOptions(options);
  tc::Artifact a = tc::readArtifact(tc::MemoryBuffer::open(path),
                                    o.no_verify ? tc::ArtifactCheck::None : tc::ArtifactCheck::All);
  auto m = std::make_unique<tc_model>();
  m->target = &tc::runtimeTargetOf(a.target, path);
  tc::TargetOptionValues values;
  if (o.threads) // what tc-run --threads gives (targets without it ignore it)
    values["threads"] = std::to_string(o.threads);
  if (o.attention) // tc-run --attention (targets without it ignore it)
    values["attention"] = o.attention;
  m->exe = m->target->load(std::move(a), values, o.device);
  const tc::Function &f = m->main();
  for (const auto *values : {&f.args, &f.results})
    for (const tc::Value *v : *values)
      if (v->type.rank() > TC_MAX_RANK)
        tc::fail(path, ": '", v->name, "' has rank ", v->type.rank(), " > TC_MAX_RANK");
  return m;
}

// Input i as the runtime takes it: a host tensor (copied into `host`, which
// the caller keeps alive) or a device buffer (GPU targets).
tc::RunInput readInput(const tc_tensor &t, int i, const tc::RuntimeTarget &target,
                       std::vector<tc::HostTensor> &host) {
  auto dtype = t.dtype ? tc::parseDType(t.dtype) : std::nullopt;
  if (!dtype)
    tc::fail("input ", i, " has unknown dtype '", t.dtype ? t.dtype : "(null)", "'");
  if (t.rank < 0 || t.rank > TC_MAX_RANK)
    tc::fail("input ", i, " has rank ", t.rank, " (0 to TC_MAX_RANK)");
  if (!t.data && t.bytes)
    tc::fail("input ", i, " has ", t.bytes, " bytes at NULL");
  std::vector<int64_t> shape(t.dims, t.dims + t.rank);
  tc::RunInput in;
  if (memoryOf(t) == TC_MEMORY_HOST) {
    try {
      host.push_back(tc::HostTensor::fromBytes(*dtype, std::move(shape), t.data, t.bytes));
    } catch (const tc::Error &e) {
      tc::fail("input ", i, ": ", e.what());
    }
    in.host = &host.back();
  } else if (memoryOf(t) == TC_MEMORY_DEVICE) {
    if (!target.gpu)
      tc::fail("input ", i, " is TC_MEMORY_DEVICE; a ", target.title, " model takes host memory");
    in.dtype = *dtype;
    in.shape = std::move(shape);
    in.device = reinterpret_cast<tc::DeviceAddress>(t.data);
    in.bytes = t.bytes;
  } else {
    tc::fail("input ", i, " has memory ", memoryOf(t),
             ", neither TC_MEMORY_HOST nor TC_MEMORY_DEVICE");
  }
  return in;
}

// Where output i goes, as outputs[i] asks on entry (tc_model_run_on_stream).
tc::RunOutput readOutput(const tc_tensor &t, size_t i, const tc::RuntimeTarget &target) {
  using To = tc::RunOutput::To;
  if (memoryOf(t) != TC_MEMORY_HOST && memoryOf(t) != TC_MEMORY_DEVICE)
    tc::fail("output ", i, " has memory ", memoryOf(t),
             ", neither TC_MEMORY_HOST nor TC_MEMORY_DEVICE");
  if (memoryOf(t) == TC_MEMORY_DEVICE && !target.gpu)
    tc::fail("output ", i, " is TC_MEMORY_DEVICE; a ", target.title, " model gives host memory");
  tc::RunOutput o;
  o.to = memoryOf(t) == TC_MEMORY_HOST ? To::Host : t.data ? To::CallerDevice : To::ModelDevice;
  o.device = reinterpret_cast<tc::DeviceAddress>(t.data);
  o.capacity = t.bytes;
  return o;
}

// tc_model_run (`chooses` false: every output to the host) and
// tc_model_run_on_stream (each output where outputs[i] asks).
void run(tc_model *m, void *stream, bool chooses, const tc_tensor *inputs, int numInputs,
         tc_tensor *outputs, int capacity) {
  if (!m || (numInputs > 0 && !inputs) || (capacity > 0 && !outputs))
    tc::fail("NULL model, inputs or outputs");
  const tc::Function &f = m->main();
  if (numInputs != int(f.args.size()))
    tc::fail("the model takes ", f.args.size(), " inputs, got ", numInputs);
  if (capacity < int(f.results.size()))
    tc::fail("room for ", capacity, " outputs, the model has ", f.results.size());
  if (!m->target->gpu && stream)
    tc::fail("a ", m->target->title, " model runs on no stream (pass NULL)");
  std::vector<tc::HostTensor> host;
  host.reserve(size_t(numInputs)); // readInput points into it
  std::vector<tc::RunInput> ins;
  for (int i = 0; i < numInputs; ++i)
    ins.push_back(readInput(inputs[i], i, *m->target, host));
  std::vector<tc::RunOutput> outs(f.results.size());
  for (size_t i = 0; chooses && i < outs.size(); ++i)
    outs[i] = readOutput(outputs[i], i, *m->target);
  m->exe->runOn(stream, ins, outs);
  m->outputs.resize(outs.size());
  for (size_t i = 0; i < outs.size(); ++i)
    m->outputs[i] = std::move(outs[i].host);
  for (size_t i = 0; i < outs.size(); ++i) {
    tc_tensor &o = outputs[i];
    describe(f.results[i], nullptr, &o);
    for (size_t d = 0; d < outs[i].shape.size() && d < TC_MAX_RANK; ++d)
      o.dims[d] = outs[i].shape[d];
    o.bytes = outs[i].bytes;
    if (outs[i].to == tc::RunOutput::To::Host) {
      o.data = m->outputs[i].bytes();
    } else {
      o.memory = TC_MEMORY_DEVICE;
      o.data = reinterpret_cast<void *>(outs[i].device);
    }
  }
}

// run's errors, named by the call that failed.
int runCall(const char *who, tc_model *m, void *stream, bool chooses, const tc_tensor *inputs,
            int numInputs, tc_tensor *outputs, int capacity) {
  return guarded(
      [&] {
        try {
          run(m, stream, chooses, inputs, numInputs, outputs, capacity);
        } catch (const std::exception &e) {
          tc::fail(who, ": ", e.what());
        }
        return 0;
      },
      -1);
}

// The trainer's state, usable (not lost).
void checkState(const tc_trainer *t) {
  if (!t->lost.empty())
    tc::fail("the state was lost: ", t->lost, "; load a checkpoint (tc_trainer_load_checkpoint)");
}

// State tensor i as a run's input, where it is: the trainer's host tensor,
// or the last step's output in the model's device memory.
tc::RunInput stateInput(tc_trainer &t, size_t i) {
  tc::RunInput in;
  if (!t.onDevice) {
    in.host = &t.host[i];
    return in;
  }
  const tc::RunOutput &o = t.device[i];
  return tc::nextRunInput(o, t.layout.types[i].dtype);
}

// One step (tc_trainer_step_on_stream).
void trainStep(tc_trainer *t, void *stream, const tc_tensor *inputs, int numInputs, double *loss) {
  if (!t || (numInputs > 0 && !inputs))
    tc::fail("NULL trainer or inputs");
  tc_model &m = *t->model;
  const tc::Function &f = m.main();
  if (numInputs != int(t->batchInputs))
    tc::fail("a batch is ", t->batchInputs, " inputs (the model's, then the loss's target), got ",
             numInputs);
  if (!m.target->gpu && stream)
    tc::fail("a ", m.target->title, " model runs on no stream (pass NULL)");
  checkState(t);
  const size_t state = t->layout.sig.state, first = f.results.size() - state;
  std::vector<tc::HostTensor> host;
  host.reserve(t->batchInputs + state); // readInput points into it
  std::vector<tc::RunInput> ins;
  for (int i = 0; i < numInputs; ++i)
    ins.push_back(readInput(inputs[i], i, *m.target, host));

  if (!m.target->gpu) { // the state moves in and back out: no copy
    for (tc::HostTensor &s : t->host)
      host.push_back(std::move(s));
    std::vector<tc::HostTensor> outs;
    try {
      outs = m.exe->run(host);
    } catch (...) {
      for (size_t i = 0; i < state; ++i)
        t->host[i] = std::move(host[t->batchInputs + i]);
      throw;
    }
    if (loss)
      *loss = outs[0].getDouble(0);
    for (size_t i = 0; i < state; ++i)
      t->host[i] = std::move(outs[first + i]);
    return;
  }

  // A GPU: the state goes in where it is and its new values stay in the
  // model's device memory; the loss comes to the host only when asked.
  using To = tc::RunOutput::To;
  for (size_t i = 0; i < state; ++i)
    ins.push_back(stateInput(*t, i));
  std::vector<tc::RunOutput> outs(f.results.size());
  for (size_t i = 0; i < outs.size(); ++i)
    outs[i].to = i == 0 && loss ? To::Host : To::ModelDevice;
  try {
    m.exe->runOn(stream, ins, outs);
  } catch (const std::exception &e) {
    // The run may have overwritten the device memory the state was in.
    if (t->onDevice)
      t->lost = std::string("a step failed (") + e.what() + ")";
    throw;
  }
  if (loss)
    *loss = outs[0].host.getDouble(0);
  t->device.assign(std::make_move_iterator(outs.begin() + std::ptrdiff_t(first)),
                   std::make_move_iterator(outs.end()));
  t->host.clear();
  t->onDevice = true;
  t->stream = stream;
}

// An eval step on the trainer's state (tc_trainer_eval).
void trainerEval(tc_trainer *t, tc_model *e, const tc_tensor *inputs, int numInputs, double *loss,
                 double *hits, double *counted) {
  if (!t || !e || (numInputs > 0 && !inputs))
    tc::fail("NULL trainer, eval model or inputs");
  checkState(t);
  const tc::Module &em = e->exe->module();
  std::optional<tc::TrainSignature> sig = tc::trainSignature(em);
  if (!sig || !sig->eval)
    tc::fail("the eval model is not an eval step (tc-opt --eval)");
  if (e->target != t->model->target)
    tc::fail("the eval model is a ", e->target->title, " model, the trainer's a ",
             t->model->target->title, " one");
  tc::TrainStateLayout el = tc::trainStateLayout(em, *sig);
  if (el.sig.state != t->layout.modelState())
    tc::fail("the eval model's state is ", el.sig.state, " tensors, the trainer's parameters and ",
             "buffers ", t->layout.modelState(),
             " (compile both with the same --trainable and "
             "--freeze)");
  for (size_t i = 0; i < el.sig.state; ++i)
    if (el.keys[i] != t->layout.keys[i] || !(el.types[i] == t->layout.types[i]))
      tc::fail("the eval model's state tensor ", i, " is '", el.keys[i], "' ", el.types[i].str(),
               ", the trainer's '", t->layout.keys[i], "' ", t->layout.types[i].str());
  const tc::Function &f = e->main();
  const size_t batch = f.args.size() - el.sig.state;
  if (numInputs != int(batch))
    tc::fail("a batch is ", batch, " inputs (the model's, then the loss's target), got ",
             numInputs);
  std::vector<tc::HostTensor> host;
  host.reserve(batch); // readInput points into it
  std::vector<tc::RunInput> ins;
  for (int i = 0; i < numInputs; ++i)
    ins.push_back(readInput(inputs[i], i, *e->target, host));
  for (size_t i = 0; i < el.sig.state; ++i) // the trainer's types: checked equal above
    ins.push_back(stateInput(*t, i));
  // The loss and metrics to the host; a GPU model's other outputs stay.
  using To = tc::RunOutput::To;
  std::vector<tc::RunOutput> outs(f.results.size());
  for (size_t i = 0; i < outs.size(); ++i)
    outs[i].to = i <= el.sig.metrics || !e->target->gpu ? To::Host : To::ModelDevice;
  e->exe->runOn(t->onDevice ? t->stream : nullptr, ins, outs);
  if (loss)
    *loss = outs[0].host.getDouble(0);
  bool top1 = el.sig.metrics == 2;
  if (hits)
    *hits = top1 ? outs[1].host.getDouble(0) : -1;
  if (counted)
    *counted = top1 ? outs[2].host.getDouble(0) : -1;
}

// State tensor i on the host.
tc::HostTensor stateOnHost(tc_trainer *t, size_t i) {
  if (!t->onDevice)
    return t->host[i];
  const tc::RunOutput &o = t->device[i];
  tc::HostTensor h(t->layout.types[i].dtype, o.shape);
  if (h.byteSize() != o.bytes)
    tc::fail("state tensor ", i, " '", t->layout.keys[i], "' is ", o.bytes,
             " bytes on the device, ", h.typeStr(), " takes ", h.byteSize());
  t->model->exe->copyToHost(t->stream, o.device, h.bytes(), o.bytes);
  return h;
}

// A trainer call's errors, named by the call that failed.
template <typename F> int trainerCall(const char *who, F &&f) {
  return guarded(
      [&] {
        try {
          f();
        } catch (const std::exception &e) {
          tc::fail(who, ": ", e.what());
        }
        return 0;
      },
      -1);
}

} // namespace

extern "C" {

tc_model *tc_model_load(const char *path, unsigned threads) {
  tc_load_options o = TC_LOAD_OPTIONS_INIT;
  o.threads = threads;
  return tc_model_load_ex(path, &o);
}

tc_model *tc_model_load_ex(const char *path, const tc_load_options *options) {
  return guarded([&] { return loadModel("tc_model_load", path, options).release(); },
                 (tc_model *)nullptr);
}

void tc_model_free(tc_model *model) { delete model; }

const char *tc_last_error(void) { return lastError.c_str(); }

const char *tc_model_backend(const tc_model *m) {
  if (!m) {
    bad("tc_model_backend: NULL model");
    return nullptr;
  }
  return m->target->name;
}

int tc_model_num_inputs(const tc_model *m) {
  return m ? int(m->main().args.size()) : bad("tc_model_num_inputs: NULL model");
}

int tc_model_num_outputs(const tc_model *m) {
  return m ? int(m->main().results.size()) : bad("tc_model_num_outputs: NULL model");
}

int tc_model_input(const tc_model *m, int i, const char **name, tc_tensor *type) {
  if (!m || i < 0 || i >= tc_model_num_inputs(m))
    return bad("tc_model_input: no input " + std::to_string(i) + " (" +
               (m ? std::to_string(tc_model_num_inputs(m)) + " inputs" : "NULL model") + ")");
  describe(m->main().args[size_t(i)], name, type);
  return 0;
}

int tc_model_output(const tc_model *m, int i, const char **name, tc_tensor *type) {
  if (!m || i < 0 || i >= tc_model_num_outputs(m))
    return bad("tc_model_output: no output " + std::to_string(i) + " (" +
               (m ? std::to_string(tc_model_num_outputs(m)) + " outputs" : "NULL model") + ")");
  describe(m->main().results[size_t(i)], name, type);
  return 0;
}

int tc_model_run(tc_model *m, const tc_tensor *inputs, int numInputs, tc_tensor *outputs,
                 int capacity) {
  return runCall("tc_model_run", m, nullptr, false, inputs, numInputs, outputs, capacity);
}

int tc_model_run_on_stream(tc_model *m, void *stream, const tc_tensor *inputs, int numInputs,
                           tc_tensor *outputs, int capacity) {
  return runCall("tc_model_run_on_stream", m, stream, true, inputs, numInputs, outputs, capacity);
}

int tc_model_device_bytes(const tc_model *m, uint64_t *planned, uint64_t *peak) {
  if (!m)
    return bad("tc_model_device_bytes: NULL model");
  if (planned)
    *planned = m->exe->plannedDeviceBytes();
  if (peak)
    *peak = m->exe->peakDeviceBytes();
  return 0;
}

int tc_model_set_communicator(tc_model *m, void *comm) {
  if (!m || !comm)
    return bad("tc_model_set_communicator: NULL model or communicator");
  return guarded(
      [&] {
        m->exe->setCommunicator(comm);
        return 0;
      },
      -1);
}

tc_trainer *tc_trainer_load(const char *path, const tc_load_options *options) {
  return guarded(
      [&] {
        auto t = std::make_unique<tc_trainer>();
        t->model = loadModel("tc_trainer_load", path, options);
        const tc::Module &module = t->model->exe->module();
        std::optional<tc::TrainSignature> sig = tc::trainSignature(module);
        if (!sig || !sig->step)
          tc::fail(path, ": not a train step (tc-opt --train): this module ",
                   sig ? "has no optimizer" : "does not train");
        t->layout = tc::trainStateLayout(module, *sig);
        t->batchInputs = module.main().args.size() - sig->state;
        t->host = tc::initialTrainState(module, t->layout);
        return t.release();
      },
      (tc_trainer *)nullptr);
}

void tc_trainer_free(tc_trainer *trainer) { delete trainer; }

const tc_model *tc_trainer_model(const tc_trainer *t) {
  if (!t) {
    bad("tc_trainer_model: NULL trainer");
    return nullptr;
  }
  return t->model.get();
}

int tc_trainer_num_inputs(const tc_trainer *t) {
  return t ? int(t->batchInputs) : bad("tc_trainer_num_inputs: NULL trainer");
}

int tc_trainer_step(tc_trainer *t, const tc_tensor *inputs, int numInputs, double *loss) {
  return trainerCall("tc_trainer_step", [&] { trainStep(t, nullptr, inputs, numInputs, loss); });
}

int tc_trainer_step_on_stream(tc_trainer *t, void *stream, const tc_tensor *inputs, int numInputs,
                              double *loss) {
  return trainerCall("tc_trainer_step_on_stream",
                     [&] { trainStep(t, stream, inputs, numInputs, loss); });
}

int tc_trainer_eval(tc_trainer *t, tc_model *e, const tc_tensor *inputs, int numInputs,
                    double *loss, double *hits, double *counted) {
  return trainerCall("tc_trainer_eval",
                     [&] { trainerEval(t, e, inputs, numInputs, loss, hits, counted); });
}

int tc_trainer_num_state(const tc_trainer *t) {
  return t ? int(t->layout.keys.size()) : bad("tc_trainer_num_state: NULL trainer");
}

int tc_trainer_state(const tc_trainer *t, int i, const char **key, tc_tensor *type) {
  if (!t || i < 0 || i >= tc_trainer_num_state(t))
    return bad("tc_trainer_state: no state tensor " + std::to_string(i) + " (" +
               (t ? std::to_string(tc_trainer_num_state(t)) + " state tensors" : "NULL trainer") +
               ")");
  const size_t at = t->batchInputs + size_t(i);
  describe(t->model->main().args[at], nullptr, type);
  if (key)
    *key = t->layout.keys[size_t(i)].c_str();
  return 0;
}

int tc_trainer_read_state(tc_trainer *t, int i, void *data, size_t bytes) {
  return trainerCall("tc_trainer_read_state", [&] {
    if (!t || i < 0 || i >= int(t->layout.keys.size()))
      tc::fail("no state tensor ", i, " (",
               t ? std::to_string(t->layout.keys.size()) + " state tensors" : "NULL trainer", ")");
    checkState(t);
    const size_t at = size_t(i);
    const tc::TensorType &type = t->layout.types[at];
    size_t need = t->onDevice ? t->device[at].bytes : t->host[at].byteSize();
    if (bytes != need || (!data && bytes))
      tc::fail("state tensor ", i, " '", t->layout.keys[at], "' (", type.str(), ") is ", need,
               " bytes; the buffer given has ", data ? bytes : 0);
    if (!bytes)
      return;
    if (t->onDevice)
      t->model->exe->copyToHost(t->stream, t->device[at].device, data, bytes);
    else
      std::memcpy(data, t->host[at].bytes(), bytes);
  });
}

int tc_trainer_save_checkpoint(tc_trainer *t, const char *path) {
  return trainerCall("tc_trainer_save_checkpoint", [&] {
    if (!t || !path)
      tc::fail("NULL trainer or path");
    checkState(t);
    if (!t->onDevice)
      return tc::writeTrainCheckpoint(path, t->layout, t->host);
    std::vector<tc::HostTensor> state;
    for (size_t i = 0; i < t->layout.keys.size(); ++i)
      state.push_back(stateOnHost(t, i));
    tc::writeTrainCheckpoint(path, t->layout, state);
  });
}

int tc_trainer_load_checkpoint(tc_trainer *t, const char *path) {
  return trainerCall("tc_trainer_load_checkpoint", [&] {
    if (!t || !path)
      tc::fail("NULL trainer or path");
    t->host = tc::readTrainCheckpoint(path, t->layout); // checked whole, or nothing changes
    t->device.clear();
    t->onDevice = false;
    t->lost.clear();
  });
}

} // extern "C"
