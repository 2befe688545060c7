// The C API (include/tc/Runtime/tc_runtime.h) over the runtime half of the
// target registry (tc/Target/Executable.h): an artifact's header names its
// target, whose loader gives the Executable every call goes through. C++
// errors become -1/NULL and a per-thread message.
#include "tc/CodeGen/Artifact.h"
#include "tc/IR/IR.h"
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

} // namespace

extern "C" {

tc_model *tc_model_load(const char *path, unsigned threads) {
  tc_load_options o = TC_LOAD_OPTIONS_INIT;
  o.threads = threads;
  return tc_model_load_ex(path, &o);
}

tc_model *tc_model_load_ex(const char *path, const tc_load_options *options) {
  return guarded(
      [&] {
        if (!path)
          tc::fail("tc_model_load: path is NULL");
        tc_load_options o = readOptions(options);
        tc::Artifact a =
            tc::readArtifact(tc::MemoryBuffer::open(path),
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
        return m.release();
      },
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

} // extern "C"
