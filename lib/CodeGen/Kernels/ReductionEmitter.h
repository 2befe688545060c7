// The Reduction family's emitter (Reduction.cpp), shared with the files
// that hold its CUDA strategies beyond a block or a thread per row
// (Columns.cpp: kept inner columns; SplitRows.cpp: long rows split across
// blocks).
#pragma once
#include "Families.h"
#include <functional>

namespace tc::kernels::reduce {

enum class Where { Prologue, Row, Element };

// The most elements of a vector (16 bytes of f16) the `columns` and `split`
// kernels read (Emitter::vectorWidth).
constexpr unsigned kMaxVector = 8;
// `columns` kernels: threads per block; the fixed grid, two blocks on each
// of 132 SMs (an H100/H200 once): each block then sums many rows, its
// partials' tree and the last block's combine of S partials amortized; the
// fewest rows per thread worth another block; and the rows a trip whose
// loads all issue before their sums (narrower vectors take more: 16 / VW,
// the same bytes in flight). Chosen by utils/kernel-grid.py's columns
// points on the H200 (docs/bench.md, "Kernel-family grid", session 38):
// against 1024 / 4 / 4, an NHWC batch norm's f16 statistics over 262144 x 64
// went 29.5 -> 15.3 us, 32640 x 514 21.9 -> 18.7 us; the resnet50 AMP step
// 14.4 -> 12.0 ms of device time.
constexpr unsigned kColumnsBlock = 256, kColumnsGrid = 264, kColumnsMinRows = 16,
                   kColumnsUnroll = 8;
// The geometry a `columns` kernel is emitted with: the constants above, or
// for a tuning sweep (utils/kernel-grid.py) TC_COLUMNS_TUNE="grid=G,rows=R,
// unroll=U,blocks=B" (B: the blocks an SM its registers must allow).
// `block` is at least 256: the last block's combine has a thread per
// column of an item (up to 32 lanes x 8).
struct ColumnsGeometry {
  unsigned grid = kColumnsGrid, minRows = kColumnsMinRows, unroll = kColumnsUnroll, blocks = 2;
  unsigned block = kColumnsBlock;
  bool broken = false; // test-only (TC_TEST_BROKEN_VARIANT): drops the last partial
  // The variant's name in the tuning record: "grid=264,rows=16,unroll=8,blocks=2,block=256".
  std::string name() const;
};
const ColumnsGeometry &columnsGeometry();
// The `columns` kernels' variants (tc-codegen --tune): the default
// geometry first, then more blocks of shorter trips, fewer of longer ones,
// and 512-thread blocks; with TC_TEST_BROKEN_VARIANT set, a last one
// named "broken" whose sums are wrong (the host tests must catch it).
const std::vector<ColumnsGeometry> &columnsVariants();
// `split` kernels: threads per block, and the shortest static row that
// takes them (poolformer's 25088 to 200704: a block per row leaves most of
// the GPU idle while a few rows fill less than a wave).
constexpr unsigned kSplitBlock = 256;
constexpr int64_t kSplitMinRow = 16384;

// How the group lies around its anchor.
struct Layout {
  const Op *anchor = nullptr;
  const Value *x = nullptr, *xDims = nullptr; // X, and a value of its shape with dims[]
  ReducePlan plan;
  std::vector<std::string> viewDims;
  bool contiguous = false, perElementResults = false;
  // Results of the anchor's result shape beside per-element ones, written
  // per row (Emitter::rowStats).
  bool rowResults = false;
  bool columns = false; // CUDA: the `columns` strategy over reduced axes [redBegin, redEnd)
  bool split = false;   // CUDA: `split`, long rows across blocks (SplitRows.cpp)
  size_t redBegin = 0, redEnd = 0;
  std::unordered_map<const Op *, Where> where;
  // Arguments read per element: at i, [0] or through broadcast strides.
  std::vector<size_t> elementArgs, broadcastArgs, rowArgs;
};

// The group's Layout (false, why set, when no kernel of the family
// handles it).
bool analyze(const KernelContext &c, const Op &anchor, Layout &l);
// THE choice of `split` (CUDA): contiguous rows of a static length of at
// least kSplitMinRow elements, with per-element results, row results (a
// loss's sum over all its elements), or both (an optimizer update beside
// the overflow check's sum of its gradient); the kernel spreads whatever
// rows there are over its grid (many rows: a block each).
bool takesSplit(const KernelContext &c, const Layout &l);
// The launches (passes) of a `split` kernel: one per statistic (one for a
// centered or an online plan's two) and the last, which writes the elements and the
// row results; with row results only (foldsRowResults), the last
// statistic's pass stores them and there is no last pass.
unsigned splitLaunches(const Layout &l);
bool foldsRowResults(const Layout &l);
// What a multi-tensor kernel's `split` takes (tc/CodeGen/MultiTensor.h):
// a full reduction of one statistic, its row results stored by that
// statistic's one launch, no broadcast argument.
bool takesMultiTensorSplit(const Layout &l);
// The blocks an SM a `split` kernel's registers must allow (launch bounds).
unsigned splitMinBlocks(const Layout &l);

// What a `split` statistics pass does with its elements (Emitter::sweep,
// centeredPass): `before` and `after` a thread's vector u (declared per u),
// `element` for each of its elements x.
struct Accumulate {
  std::string before, element, after;
};

class Emitter {
public:
  Emitter(const KernelContext &c, const Layout &l)
      : c(c), l(l), ex(c), A(c.cuda() && l.x->type.dtype != DType::F64 ? "float" : "double") {}

  std::optional<EmittedKernel> emit();

private:
  const KernelContext &c;
  const Layout &l;
  Expressions ex;
  const char *A;
  bool block = false; // CUDA: a block per row
  std::string pro, rowCode, elemCode, reducedInput;
  std::unordered_set<const Value *> rowStats; // results stored per row (ReducePlan::rowValues)

  bool emitOps();
  void setup(std::ostream &os);
  // `vector`: X-shaped arguments come from registers v<i><vector>, the
  // broadcast arguments in `lanes` (laneArgs) from c<i><vector>, and
  // results go to w<r><vector> (the caller reads and writes the vectors).
  // `laneAt`: where the lane arguments' values are (c<i><laneAt>; default
  // c<i><vector>).
  std::string loads(bool final, const char *vector = nullptr, const std::vector<size_t> &lanes = {},
                    const char *laneAt = nullptr) const;
  // The arguments read a vector at a time (X's shape, indexed by i) and
  // the vectors' width VW: 16 bytes of the widest of them and of results
  // written per element, at most kMaxVector, halved until it divides the
  // run length n when n is static (> 0); 1 (no vectors) for none.
  unsigned vectorWidth(int64_t n, std::vector<size_t> &vectors) const;
  // `split`'s broadcast arguments that vary along X's last axis alone,
  // with a static extent E that VW divides (a per-channel scale on NHWC):
  // a vector of X starts at a multiple of VW, so its channels are
  // consecutive and each such argument is read as one vector at the
  // first element's index modulo E, not as VW elements at VW 64-bit
  // modulos (poolformer's per-channel GroupNorm: 124 registers so).
  std::vector<size_t> laneArgs(unsigned vw) const;
  // tc_vec<T, VW> of v's storage type.
  std::string vectorType(const Value *v) const;
  // Declares v<i>[count] for each of `vectors` and reads vector u of each
  // (`where` declares what `at`, its element index, and `inRange` read);
  // c<i>[count] the same for each of `lanes` (laneArgs), at `at` modulo
  // X's last extent.
  void vectorLoads(std::ostream &os, const std::vector<size_t> &vectors, const char *count,
                   const std::string &where, const std::string &inRange, const std::string &at,
                   const std::vector<size_t> &lanes = {}) const;
  // The run-time condition of the vector path: n a multiple of VW, every
  // vector's and lane argument's pointer aligned ("false" without vectors).
  std::string aligned(const std::vector<size_t> &vectors, const std::string &n,
                      const std::vector<size_t> &lanes = {}) const;
  // A statistic's starting value, in the kernel's accumulator type `A`.
  std::string initOf(const ReduceStat &s) const;
  void elementLoop(std::ostream &os, const std::string &code) const;
  void rowLoads(std::ostream &os) const;
  void rowBody(std::ostream &os);
  void columnsLoop(std::ostream &os) const;
  void splitLoop(std::ostream &os) const;
  // `split`: statistic `s` over the block's chunk into `into`; a centered
  // plan's pass (`drop`: the test-only broken combine).
  void sweep(std::ostream &os, const ReduceStat &s, const char *into,
             const std::function<void(const Accumulate *)> &chunk) const;
  void centeredPass(std::ostream &os, const std::function<void(const Accumulate *)> &chunk,
                    bool drop) const;
  // `split`: an online plan's pass (max and sum of exponentials in one sweep);
  // with row results only (`folded`) it stores them too.
  void onlinePass(std::ostream &os, const std::function<void(const Accumulate *)> &chunk, bool drop,
                  bool folded) const;
  void topK(std::ostream &os) const;
};

} // namespace tc::kernels::reduce
