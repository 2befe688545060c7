// safetensors checkpoints: Hugging Face's tensor file format, what PyTorch
// users load with safetensors.torch.load_file.
//
//   8 bytes    N, the header's length (little-endian u64)
//   N bytes    the header, a JSON object, padded with spaces:
//              {"__metadata__": {"key": "value", ...},
//               "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}, ...}
//   the rest   the data: each tensor's little-endian C-order bytes at [BEGIN, END)
//              relative to the data's start
//
// Dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL (tc's numeric
// dtypes; str has no safetensors form).
#pragma once
#include "tc/Runtime/TensorIO.h"
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

struct SafetensorsFile {
  std::vector<NamedTensor> tensors;            // in the header's order
  std::map<std::string, std::string> metadata; // "__metadata__"
};

// The file's bytes. Header entries follow `tensors`' order; the data is laid
// out by element size, largest first (given order among equal sizes), so
// every tensor's data is aligned to its element size (the header is padded
// to make the data start 8-byte aligned). Given tensors in the order Python's
// safetensors sorts them (by dtype, larger elements first, then by name),
// the bytes are its save_file's, when there is at most one metadata entry
// (it writes several in hash order, which varies run to run).
//
// Throws tc::Error (not naming a file) for a str tensor, a duplicate or
// reserved ("__metadata__") name, or a name or metadata that is not UTF-8.
std::string serializeSafetensors(const std::vector<NamedTensor> &tensors,
                                 const std::map<std::string, std::string> &metadata = {});

// Writes serializeSafetensors' bytes to `path` atomically: into a new
// temporary file beside it (`path`.tmp.<pid>.<n>), fsync'd, then renamed
// over `path`. A failed write leaves `path` as it was and removes the
// temporary file (a killed process can leave one behind, never a partial
// `path`). Throws tc::Error naming `path`.
void writeSafetensors(const std::string &path, const std::vector<NamedTensor> &tensors,
                      const std::map<std::string, std::string> &metadata = {});

// Reads and validates a whole file; the bytes are untrusted. Every defect is
// one tc::Error line naming `file` (and the tensor where there is one): a
// truncated file; a header length past the file or over 100 MB; a header
// that is not a JSON object; a tensor without dtype, shape or data_offsets,
// or with another key; an unsupported dtype; a negative or too large shape;
// data_offsets reversed, past the data, or not holding dtype x shape bytes;
// tensors that overlap, or data no tensor holds (as Python's safetensors,
// the tensors must tile the data exactly); duplicate names; __metadata__
// that is not an object of strings.
SafetensorsFile parseSafetensors(std::string_view bytes, const std::string &file);
SafetensorsFile readSafetensors(const std::string &path);

} // namespace tc
