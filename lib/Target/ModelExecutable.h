// What every backend's Executable forwards unchanged to its runtime's model
// (CpuModel, CudaModel: the same member names); a backend adds the rest.
#pragma once
#include "tc/Target/Executable.h"

namespace tc {

template <class Model> class ModelExecutable : public Executable {
public:
  explicit ModelExecutable(std::unique_ptr<Model> m) : m_(std::move(m)) {}
  const Module &module() const override { return m_->module(); }
  std::vector<HostTensor> run(const std::vector<HostTensor> &inputs) override {
    return m_->run(inputs);
  }
  std::vector<std::string> stepReport() const override { return m_->stepReport(); }
  void setProfiling(bool on) override { m_->setProfiling(on); }
  void setTrace(RunTrace *trace) override { m_->setTrace(trace); }
  uint64_t arenaBytes() const override { return m_->arenaBytes(); }

protected:
  std::unique_ptr<Model> m_;
};

} // namespace tc
