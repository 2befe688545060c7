#include "tc/Runtime/ConstantTensor.h"

namespace tc {

HostTensor constantTensor(const Value &v) {
  return HostTensor::fromBytes(v.type.dtype, staticDims(v.type.shape), v.data->ptr, v.data->size);
}

} // namespace tc
