// What `tc-run` does around an executor, reusable by tests and other tools:
// gathering inputs (test-data folders, single files, random data), writing
// test_data_set folders, and comparing outputs against expected ones.
#pragma once
#include "tc/IR/IR.h"
#include "tc/Runtime/HostTensor.h"
#include <cstdint>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tc {

// Where the inputs of a function come from. For each argument the first that
// has it wins: `files`, then `dir`, then random data when `random` is set.
struct InputSources {
  // A test_data_set folder: input_N.pb for argument N, or NAME.npy.
  std::string dir;
  // NAME -> .pb or .npy file.
  std::vector<std::pair<std::string, std::string>> files;
  // Uniform random data: floats in [-1, 1) without 0, integers in [1, 9],
  // bools 0/1. Symbolic dims take their size from `dims`, else from an
  // input read from a file that has the same symbol.
  bool random = false;
  uint64_t seed = 0;
  std::map<std::string, int64_t> dims;
  // Opt-in (tc-run --bf16-as-u16): a u16 tensor read for a bf16 input holds
  // the bf16 bit patterns (older ONNX test data stores bf16 that way).
  bool bf16AsU16 = false;
};

// One tensor per argument of `f`, in order. Throws tc::Error naming the
// input or file on anything missing or unreadable; types are checked later
// by the executor.
std::vector<HostTensor> gatherInputs(const Function &f, const InputSources &src);

// A random tensor of type `t` (see InputSources::random); `what` names it in
// errors, e.g. about a symbolic dim without a size.
HostTensor randomTensor(const TensorType &t, const std::map<std::string, int64_t> &dims,
                        std::mt19937_64 &rng, const std::string &what);

// Writes input_N.pb and output_N.pb (TensorProtos named after the function's
// arguments and results) into `dir`, creating it: an ONNX test_data_set.
void writeTestDataSet(const std::string &dir, const Function &f,
                      const std::vector<HostTensor> &inputs,
                      const std::vector<HostTensor> &outputs);

struct Comparison {
  bool ok = true;
  double maxAbsErr = 0; // over elements where neither side is NaN
  double maxRelErr = 0; // |a - e| / |e| over elements where e != 0
  int64_t mismatches = 0;
  int64_t extraNaNs = 0;   // NaN in actual where expected has a number
  int64_t missingNaNs = 0; // a number in actual where expected has NaN
  int64_t firstBad = -1;   // element index of the first problem
  std::string typeProblem; // set when dtype or shape differ
};

// Element i matches when |a - e| <= atol + rtol * |e| (equal infinities
// match; NaN matches NaN only).
Comparison compareTensors(const HostTensor &actual, const HostTensor &expected, double rtol,
                          double atol);

// Loads the expected value of result `index` from `dir`: output_N.pb, or
// NAME.npy.
HostTensor loadExpectedOutput(const std::string &dir, size_t index, const std::string &name);

// Compares every result of `f` with the expected one in `dir`, printing one
// line each: "output 0 'y': max abs err 1.2e-07, max rel err 3.4e-06 [ok]".
// Returns true when all match. With `bf16AsU16`, a u16 expected value of a
// bf16 result holds bf16 bit patterns and must match them exactly (any NaN
// matches any NaN).
bool compareOutputs(const Function &f, const std::vector<HostTensor> &outputs,
                    const std::string &dir, double rtol, double atol, std::ostream &os,
                    bool bf16AsU16 = false);

// "f32[2,3] [0.5, -1.25, ...]": the type and up to `maxValues` values, plus
// the count of NaN and infinite values when there are any.
std::string summarizeTensor(const HostTensor &t, size_t maxValues = 8);
// One line per result: "output 0 'y': f32[2,3] [...]".
void printOutputSummary(const Function &f, const std::vector<HostTensor> &outputs,
                        std::ostream &os);

} // namespace tc
