// The C API (include/tc/Runtime/tc_runtime.h) over CpuModel: C++ errors
// become -1/NULL and a per-thread message.
#include "tc/Runtime/CpuModel.h"
#include "tc/Runtime/tc_runtime.h"
#include "tc/Support/Error.h"
#include <cstring>
#include <string>

struct tc_model {
  std::unique_ptr<tc::CpuModel> model;
  std::vector<tc::HostTensor> outputs; // of the last run
};

namespace {

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

} // namespace

extern "C" {

tc_model *tc_model_load(const char *path, unsigned threads) {
  return guarded(
      [&] {
        if (!path)
          tc::fail("tc_model_load: path is NULL");
        auto m = std::make_unique<tc_model>();
        m->model = tc::CpuModel::load(tc::MemoryBuffer::open(path), threads);
        for (const tc::Value *v : m->model->module().main().args)
          if (v->type.rank() > TC_MAX_RANK)
            tc::fail(path, ": input '", v->name, "' has rank ", v->type.rank(), " > TC_MAX_RANK");
        return m.release();
      },
      (tc_model *)nullptr);
}

void tc_model_free(tc_model *model) { delete model; }

const char *tc_last_error(void) { return lastError.c_str(); }

int tc_model_num_inputs(const tc_model *m) {
  return m ? int(m->model->module().main().args.size()) : -1;
}

int tc_model_num_outputs(const tc_model *m) {
  return m ? int(m->model->module().main().results.size()) : -1;
}

int tc_model_input(const tc_model *m, int i, const char **name, tc_tensor *type) {
  if (!m || i < 0 || i >= tc_model_num_inputs(m))
    return -1;
  describe(m->model->module().main().args[size_t(i)], name, type);
  return 0;
}

int tc_model_output(const tc_model *m, int i, const char **name, tc_tensor *type) {
  if (!m || i < 0 || i >= tc_model_num_outputs(m))
    return -1;
  describe(m->model->module().main().results[size_t(i)], name, type);
  return 0;
}

int tc_model_run(tc_model *m, const tc_tensor *inputs, int numInputs, tc_tensor *outputs,
                 int capacity) {
  return guarded(
      [&] {
        if (!m || (numInputs > 0 && !inputs) || (capacity > 0 && !outputs))
          tc::fail("tc_model_run: NULL model, inputs or outputs");
        const tc::Function &f = m->model->module().main();
        if (numInputs != int(f.args.size()))
          tc::fail("tc_model_run: the model takes ", f.args.size(), " inputs, got ", numInputs);
        if (capacity < int(f.results.size()))
          tc::fail("tc_model_run: room for ", capacity, " outputs, the model has ",
                   f.results.size());
        std::vector<tc::HostTensor> ins;
        for (int i = 0; i < numInputs; ++i) {
          const tc_tensor &t = inputs[i];
          auto dtype = t.dtype ? tc::parseDType(t.dtype) : std::nullopt;
          if (!dtype)
            tc::fail("tc_model_run: input ", i, " has unknown dtype '",
                     t.dtype ? t.dtype : "(null)", "'");
          if (t.rank < 0 || t.rank > TC_MAX_RANK || (!t.data && t.bytes))
            tc::fail("tc_model_run: input ", i, " has rank ", t.rank, " or no data");
          ins.push_back(tc::HostTensor::fromBytes(
              *dtype, std::vector<int64_t>(t.dims, t.dims + t.rank), t.data, t.bytes));
        }
        m->outputs = m->model->run(ins);
        for (size_t i = 0; i < m->outputs.size(); ++i) {
          tc::HostTensor &o = m->outputs[i];
          describe(f.results[i], nullptr, &outputs[i]);
          for (size_t d = 0; d < o.rank() && d < TC_MAX_RANK; ++d)
            outputs[i].dims[d] = o.shape()[d];
          outputs[i].data = o.bytes();
          outputs[i].bytes = o.byteSize();
        }
        return 0;
      },
      -1);
}

} // extern "C"
