// The graph IR: a Module holds Functions; a Function holds typed SSA tensor
// Values (arguments, constants with data, op results) and Ops in order.
#pragma once
#include "tc/IR/Attribute.h"
#include "tc/IR/OpTable.h"
#include "tc/IR/Types.h"
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

class Op;
class Function;

// Where an op or constant came from: model file and ONNX node name, and the
// train-step phase. Every diagnostic about an op starts with it.
// Which part of a train step an op belongs to (docs/training.md): the
// forward (the default: inference modules, the loss), the backward (ops
// autodiff makes) or the optimizer (ops append-optimizer makes, the
// loss-scale update included). Passes that make ops from others keep their
// locations, so the phase rides along to codegen and tc-prof.
enum class Phase : uint8_t { Forward, Backward, Optimizer };
const char *phaseName(Phase p); // "forward", "backward", "optimizer"
std::optional<Phase> parsePhase(std::string_view s);

struct Location {
  std::string file;
  std::string node;
  Phase phase = Phase::Forward;
  bool empty() const { return file.empty() && node.empty() && phase == Phase::Forward; }
  bool operator==(const Location &o) const = default;
  std::string str() const; // "model.onnx:node_17"
};

// Raw little-endian bytes of a constant. `owner` keeps the storage alive, so
// data can point into an mmapped .tcbc file or an owned vector alike.
struct TensorData {
  std::shared_ptr<const void> owner;
  const uint8_t *ptr = nullptr;
  size_t size = 0;

  static TensorData copyOf(const void *bytes, size_t n);
  static TensorData fromVector(std::vector<uint8_t> bytes);
  std::span<const uint8_t> bytes() const { return {ptr, size}; }
  bool operator==(const TensorData &o) const {
    return size == o.size && (size == 0 || std::memcmp(ptr, o.ptr, size) == 0);
  }
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(ptr); }
};

class Value {
public:
  std::string name;
  TensorType type;
  Op *def = nullptr;              // producing op; null for arguments and constants
  unsigned resultIndex = 0;       // which result of `def`
  std::optional<TensorData> data; // set for constants (weights)
  Location loc;                   // for constants: file and initializer name

  bool isConstant() const { return data.has_value(); }
  bool isArgument() const { return !def && !data; }
};

class Op {
public:
  explicit Op(OpKind k) : kind(k) {}
  OpKind kind;
  std::vector<Value *> operands; // nullptr marks an absent optional operand
  std::vector<Value *> results;
  std::vector<std::pair<std::string, Attribute>> attrs; // in op-table order
  Location loc;

  const OpInfo &info() const { return opInfo(kind); }
  std::string_view name() const { return info().name; }
  bool is(OpKind k) const { return kind == k; }
  Value *operand(size_t i) const { return i < operands.size() ? operands[i] : nullptr; }
  Value *result(size_t i = 0) const { return results.at(i); }

  // Attribute access; the getters fall back to the op-table default.
  const Attribute *findAttr(std::string_view n) const;
  const Attribute &attr(std::string_view n) const; // throws if absent w/o default
  int64_t getInt(std::string_view n) const { return attr(n).i(); }
  double getFloat(std::string_view n) const { return attr(n).f(); }
  const std::string &getString(std::string_view n) const { return attr(n).s(); }
  const std::vector<int64_t> &getInts(std::string_view n) const { return attr(n).ints(); }
  void setAttr(const std::string &n, Attribute a); // keeps op-table order

  // "model.onnx:node_17 (Conv)" — the prefix of every diagnostic about this op.
  std::string where() const;
};

class Function {
public:
  std::string name;
  std::vector<Value *> args;
  std::vector<Value *> constants;
  std::vector<std::unique_ptr<Op>> ops; // in execution order
  std::vector<Value *> results;

  Value *addArgument(std::string n, TensorType t);
  Value *addConstant(std::string n, TensorType t, TensorData d, Location loc = {});
  // Appends an op; its results get fresh values with the given names/types.
  Op *addOp(OpKind k, std::vector<Value *> operands, std::vector<std::string> resultNames,
            std::vector<TensorType> resultTypes, Location loc = {});
  Op *insertOp(size_t pos, std::unique_ptr<Op> op);

  // Replaces every use of `from` (as operand or function result) by `to`.
  void replaceAllUsesWith(Value *from, Value *to);
  // Drops ops marked in `dead` and constants no longer used.
  void eraseOps(const std::vector<const Op *> &dead);
  void removeUnusedConstants();
  // A name not yet used by any value of this function, based on `base`.
  std::string uniqueName(const std::string &base);
  Value *newValue(std::string n, TensorType t);
  bool hasValueNamed(const std::string &n) const { return names_.count(n) != 0; }

private:
  std::deque<std::unique_ptr<Value>> values_;
  std::map<std::string, unsigned> names_; // name -> use count for uniqueName
};

class Module {
public:
  std::string name = "model";
  // Free-form metadata from the source model (producer, opset, source file),
  // printed and serialized in key order.
  std::map<std::string, std::string> metadata;
  std::vector<std::unique_ptr<Function>> functions;

  Function *addFunction(std::string n);
  Function *lookup(std::string_view n) const;
  Function &main() const; // the entry function: "main", or the first one
};

// Gives every function's arguments and op results the sizes `dims` has for
// their symbolic dims, expressions of them evaluated (no shape inference: a
// `?` dim stays unknown).
void substituteDims(Module &m, const std::map<std::string, int64_t> &dims);

} // namespace tc
