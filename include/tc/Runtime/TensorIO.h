// Reading and writing tensors as files: ONNX TensorProto (.pb, the format of
// input_N.pb / output_N.pb in ONNX test_data_set_N folders) and NumPy .npy.
// Every reader treats the bytes as untrusted: a truncated or corrupt file is a
// tc::Error that names the file, and no size claim is believed before it is
// checked against the bytes actually present.
#pragma once
#include "tc/Runtime/HostTensor.h"
#include <string>
#include <string_view>

namespace tc {

struct NamedTensor {
  std::string name; // the TensorProto's name; for .npy, the file's stem
  HostTensor tensor;
};

// ONNX TensorProto: raw_data or the typed fields (float_data, int32_data for
// f16/bf16/i32/i16/i8/u16/u8/bool, int64_data, double_data, uint64_data for
// u32/u64). `file` names the source in errors. Writing uses raw_data.
NamedTensor parseTensorProto(std::string_view bytes, const std::string &file);
std::string serializeTensorProto(const HostTensor &t, const std::string &name);
NamedTensor readTensorProto(const std::string &path);
void writeTensorProto(const std::string &path, const HostTensor &t, const std::string &name);

// NumPy .npy, format versions 1 to 3, C order; dtypes <f2 <f4 <f8 |i1 <i2 <i4
// <i8 |u1 <u2 <u4 <u8 |b1 (big-endian '>' is byte-swapped on read). bf16 has
// no NumPy dtype: writing it is an error.
HostTensor parseNpy(std::string_view bytes, const std::string &file);
std::string serializeNpy(const HostTensor &t);
HostTensor readNpy(const std::string &path);
void writeNpy(const std::string &path, const HostTensor &t);

// By extension: .npy is NumPy, anything else a TensorProto.
NamedTensor readTensorFile(const std::string &path);
void writeTensorFile(const std::string &path, const HostTensor &t, const std::string &name);

} // namespace tc
