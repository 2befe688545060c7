#include "CudaControlFlow.h"
#include "tc/Runtime/ControlFlowRun.h"

namespace tc::cuda {

namespace {

int64_t product(std::vector<int64_t>::const_iterator begin,
                std::vector<int64_t>::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it)
    n *= *it;
  return n;
}

class DeviceControlFlow : public ControlFlowRun<DeviceTensor> {
public:
  DeviceControlFlow(const Module &m, const StepByStepRun &run) : ControlFlowRun(m), run_(run) {}

protected:
  std::vector<DeviceTensor> call(const Op &, const Function &f,
                                 std::vector<DeviceTensor> args) override {
    return run_.runFunction(f, args);
  }
  DType dtype(const DeviceTensor &t) const override { return t.dtype; }
  const std::vector<int64_t> &dims(const DeviceTensor &t) const override { return t.dims; }

  HostTensor read(const DeviceTensor &t) override {
    HostTensor h(t.dtype, t.dims);
    if (h.byteSize())
      d_.check(d_.memcpyDtoHAsync(h.bytes(), t.at, h.byteSize(), run_.stream), "cuMemcpyDtoHAsync");
    run_.sync();
    ++*run_.reads;
    return h;
  }

  DeviceTensor make(const HostTensor &t) override {
    DeviceTensor r = fresh(t.dtype(), t.shape());
    if (t.byteSize()) // staged from pageable memory: `t` may go once this returns
      d_.check(d_.memcpyHtoDAsync(r.at, t.bytes(), t.byteSize(), run_.stream), "cuMemcpyHtoDAsync");
    return r;
  }

  DeviceTensor sliceAt(const DeviceTensor &t, size_t axis, int64_t index) override {
    std::vector<int64_t> out = t.dims;
    out.erase(out.begin() + std::ptrdiff_t(axis));
    int64_t outer = product(t.dims.begin(), t.dims.begin() + std::ptrdiff_t(axis));
    size_t chunk = size_t(product(t.dims.begin() + std::ptrdiff_t(axis) + 1, t.dims.end())) *
                   dtypeSize(t.dtype);
    auto from = [&](int64_t o) { return t.at + (size_t(o * t.dims[axis] + index)) * chunk; };
    if (outer == 1) // one contiguous run of bytes: a view
      return {t.dtype, out, t.memory, from(0)};
    DeviceTensor r = fresh(t.dtype, out);
    for (int64_t o = 0; o < outer; ++o)
      copy(r.at + size_t(o) * chunk, from(o), chunk);
    return r;
  }

  DeviceTensor stack(const std::vector<DeviceTensor> &parts, size_t axis, DType dt,
                     const std::vector<int64_t> &part) override {
    std::vector<int64_t> out = part;
    out.insert(out.begin() + std::ptrdiff_t(axis), int64_t(parts.size()));
    DeviceTensor r = fresh(dt, out);
    int64_t outer = product(part.begin(), part.begin() + std::ptrdiff_t(axis));
    size_t chunk = size_t(product(part.begin() + std::ptrdiff_t(axis), part.end())) * dtypeSize(dt);
    size_t n = parts.size();
    for (int64_t o = 0; o < outer; ++o) // each part into its slice of the result
      for (size_t t = 0; t < n; ++t)
        copy(r.at + (size_t(o) * n + t) * chunk, parts[t].at + size_t(o) * chunk, chunk);
    return r;
  }

private:
  const StepByStepRun &run_;
  const Driver &d_ = driver();

  DeviceTensor fresh(DType dt, const std::vector<int64_t> &dims) {
    size_t bytes = size_t(product(dims.begin(), dims.end())) * dtypeSize(dt);
    auto memory = std::make_shared<DeviceMemory>(bytes);
    CUdeviceptr at = memory->get();
    return {dt, dims, std::move(memory), at};
  }
  void copy(CUdeviceptr to, CUdeviceptr from, size_t bytes) {
    if (bytes)
      d_.check(d_.memcpyDtoDAsync(to, from, bytes, run_.stream), "cuMemcpyDtoDAsync");
  }
};

} // namespace

std::vector<DeviceTensor> runControlFlowOnDevice(const Module &m, const Op &op,
                                                 const std::vector<const DeviceTensor *> &ins,
                                                 const StepByStepRun &run) {
  return DeviceControlFlow(m, run).run(op, ins);
}

} // namespace tc::cuda
