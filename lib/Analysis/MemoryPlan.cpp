#include "tc/Analysis/MemoryPlan.h"
#include "tc/Analysis/KernelCount.h"
#include "tc/CodeGen/MultiTensor.h"
#include "tc/IR/DimExpr.h"
#include "tc/IR/ElementMove.h"
#include "tc/Runtime/ArenaPacking.h"
#include "tc/Support/Error.h"
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <unordered_map>
#include <unordered_set>

namespace tc {

namespace {

// Whether a step may write its result over operand `operand` (of the same
// size, read by nobody later). A pointwise step reads each element once, at
// the position it writes: any operand.
// One result only: a kernel's buffers are __restrict, so the compiler may
// store a result before it loads an input that result does not depend on;
// with that store over that input, another result read the new value
// (resnet50's train step on the H200 with NHWC ConvTranspose: a
// rematerialized block output written over the incoming gradient that the
// group's last result still read; every step below it diverged, while the
// host build of the same kernel kept program order). A lone result depends
// on every input its kernel loads.
// A scatter (startsFromData, ElementMove.h; outlined, the Fused op's
// `overwrites` operand) overwrites its data: its gather form, too, reads
// each element where it writes it. An embedding's gradient, a [vocab,
// hidden] table the scatter's data alone reads: roberta_base's copy was
// 0.17 ms of its AMP step on the H100.
bool mayOverwrite(const Op &op, size_t operand) {
  if (op.results.size() != 1)
    return false;
  if (startsFromData(op.kind))
    return operand == 0;
  if (op.is(OpKind::Fused)) {
    if (int64_t data = op.getInt("overwrites"); data >= 0)
      return int64_t(operand) == data;
    return op.getString("kind") == "pointwise";
  }
  return op.info().category == FusionCategory::Pointwise;
}

uint64_t alignUp(uint64_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

uint64_t bytesOf(const TensorType &t, const std::map<std::string, int64_t> &dims,
                 std::map<std::string, int64_t> &assumed, const Value &v) {
  TensorType s = t;
  for (Dim &d : s.shape) {
    if (d.isSymbolic()) {
      std::optional<int64_t> n = dimValue(d, dims);
      if (!n) { // a size only a run knows: its symbols at 1
        std::set<std::string> syms;
        exprOf(d).symbols(syms);
        std::map<std::string, int64_t> ones = dims;
        for (const std::string &s : syms)
          if (!dims.count(s))
            ones[s] = assumed[s] = 1;
        n = dimValue(d, ones);
      }
      d = Dim::fixed(n.value_or(1));
    } else if (d.isUnknown()) {
      fail("memory plan: %", v.name, " has type ", t.str(),
           " with an unknown size (run shape inference or give --dim)");
    }
  }
  auto b = byteSize(s);
  if (!b)
    fail("memory plan: %", v.name, " of type ", t.str(), " is too large");
  return *b;
}

struct Block {
  uint64_t bytes;
  size_t start, end;
  uint64_t offset = 0;
  std::vector<size_t> members; // buffer indices
  bool partial = false;        // a Slice view of it is a member
};

} // namespace

MemoryPlan planMemory(const Function &f, const std::map<std::string, int64_t> &dims) {
  MemoryPlan plan;
  plan.function = f.name;
  std::unordered_map<const Value *, size_t> index; // value -> buffer
  // Steps: an op's index, but a multi-tensor run's (MultiTensor.h) members
  // are one step, its first's: one launch reads and writes them all.
  std::vector<size_t> step(f.ops.size());
  for (size_t i = 0; i < f.ops.size(); ++i) {
    int64_t run = multiTensorRun(*f.ops[i]);
    step[i] = i > 0 && run && run == multiTensorRun(*f.ops[i - 1]) ? step[i - 1] : i;
  }
  std::unordered_map<const Value *, size_t> lastUse, lastReaders; // ops reading it at its last step
  for (size_t i = 0; i < f.ops.size(); ++i) {
    std::unordered_set<const Value *> read;
    for (const Value *v : f.ops[i]->operands)
      if (v && read.insert(v).second) {
        auto [it, fresh] = lastUse.emplace(v, step[i]);
        size_t &n = lastReaders[v];
        n = fresh || it->second != step[i] ? 1 : n + 1;
        it->second = step[i];
      }
  }
  for (const Value *r : f.results)
    lastUse[r] = SIZE_MAX;

  // Buffers, views resolved to their storage.
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op &op = *f.ops[i];
    for (const Value *r : op.results) {
      PlannedBuffer b;
      b.value = r;
      b.def = step[i];
      b.lastUse = lastUse.count(r) ? lastUse[r] : step[i];
      const Value *src = op.operand(0);
      std::optional<uint64_t> at = src ? viewByteOffset(op, dims) : std::nullopt;
      if (at) {
        b.base = src;
        b.viewOffset = *at;
        b.partial = op.is(OpKind::Slice);
        auto it = index.find(src);
        if (it != index.end() && plan.buffers[it->second].base) { // view of a view
          const PlannedBuffer &parent = plan.buffers[it->second];
          b.base = parent.base;
          b.viewOffset += parent.viewOffset;
          b.partial |= parent.partial;
        }
        ++plan.views;
      } else {
        b.bytes = bytesOf(r->type, dims, plan.assumedDims, *r);
      }
      index[r] = plan.buffers.size();
      plan.buffers.push_back(b);
    }
  }

  // Storage blocks: one per non-view buffer, merged for in-place writes.
  std::vector<Block> blocks;
  std::unordered_map<const Value *, size_t> blockOf;
  auto storageEnd = [&](size_t bi) { return plan.buffers[bi].lastUse; };
  for (size_t bi = 0; bi < plan.buffers.size(); ++bi) {
    PlannedBuffer &b = plan.buffers[bi];
    if (b.base) {
      // A view keeps its base's storage alive (arguments and constants
      // live outside the arena).
      if (auto it = blockOf.find(b.base); it != blockOf.end()) {
        blocks[it->second].end = std::max(blocks[it->second].end, storageEnd(bi));
        blocks[it->second].members.push_back(bi);
        blocks[it->second].partial |= b.partial;
        blockOf[b.value] = it->second;
      }
      continue;
    }
    const Op &op = *b.value->def;
    for (size_t k = 0; k < op.operands.size(); ++k) {
      const Value *o = op.operands[k];
      auto it = o && mayOverwrite(op, k) ? blockOf.find(o) : blockOf.end();
      if (it == blockOf.end())
        continue;
      Block &blk = blocks[it->second];
      // Same byte count, not just the same aligned block: an operand half
      // the result's size (broadcast) must not be overwritten as it is read.
      // And no view of a part of it (a Slice) is read: element i's write
      // could land where another element is still to be read.
      // Read by this op alone there (not by another member of its run).
      if (plan.buffers[blk.members.front()].bytes == b.bytes && blk.end == b.def && !blk.partial &&
          lastReaders[o] == 1) {
        blk.end = storageEnd(bi);
        blk.members.push_back(bi);
        blockOf[b.value] = it->second;
        b.inPlaceOf = o;
        ++plan.inPlace;
        break;
      }
    }
    if (b.inPlaceOf)
      continue;
    blocks.push_back({alignUp(b.bytes), b.def, storageEnd(bi), 0, {bi}});
    blockOf[b.value] = blocks.size() - 1;
  }

  // Greedy by size (ArenaPacking.h: what a runtime does per shape too).
  std::vector<ArenaBlock> spans;
  for (const Block &b : blocks)
    spans.push_back({b.bytes, b.start, b.end});
  plan.arenaBytes = packArena(spans);
  for (size_t i = 0; i < blocks.size(); ++i)
    blocks[i].offset = spans[i].offset;

  plan.blocks = spans;
  plan.blockOf.assign(plan.buffers.size(), SIZE_MAX);
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t m : blocks[i].members) {
      plan.buffers[m].offset = blocks[i].offset;
      plan.blockOf[m] = i;
    }
  for (const PlannedBuffer &b : plan.buffers)
    plan.naiveBytes += alignUp(b.bytes);
  size_t steps = f.ops.size();
  for (size_t s = 0; s < steps; ++s) {
    uint64_t live = 0;
    for (const Block &b : blocks)
      if (b.start <= s && s <= b.end)
        live += b.bytes;
    plan.liveLowerBound = std::max(plan.liveLowerBound, live);
  }
  return plan;
}

static std::string human(uint64_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / double(1u << 20));
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", (unsigned long long)bytes);
  return buf;
}

void printMemoryPlan(const MemoryPlan &plan, std::ostream &os, bool perBuffer) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2fx", plan.compression());
  os << "memory plan for @" << plan.function;
  if (!plan.assumedDims.empty()) {
    os << " (assuming";
    for (auto &[s, n] : plan.assumedDims)
      os << " " << s << "=" << n;
    os << ")";
  }
  os << ": " << plan.buffers.size() << " tensors (" << plan.views << " views, " << plan.inPlace
     << " in place)\n"
     << "  predicted peak (arena): " << human(plan.arenaBytes) << " (" << plan.arenaBytes
     << " bytes)\n"
     << "  naive peak (no reuse):  " << human(plan.naiveBytes) << " (" << plan.naiveBytes
     << " bytes)\n"
     << "  compression:            " << ratio << "\n"
     << "  live lower bound:       " << human(plan.liveLowerBound) << "\n";
  if (!perBuffer)
    return;
  for (const PlannedBuffer &b : plan.buffers) {
    os << "  %" << b.value->name << " " << b.value->type.str() << " steps " << b.def << ".."
       << (b.lastUse == SIZE_MAX ? std::string("end") : std::to_string(b.lastUse));
    if (b.base)
      os << " view of %" << b.base->name
         << (b.viewOffset ? " at +" + std::to_string(b.viewOffset) : std::string());
    else
      os << " offset " << b.offset << " size " << b.bytes;
    if (b.inPlaceOf)
      os << " in place of %" << b.inPlaceOf->name;
    os << "\n";
  }
}

} // namespace tc
