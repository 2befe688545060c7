#include "tc/Runtime/CudaLaunch.h"
#include "../../lib/Runtime/CUDA/LibraryLoader.h" // private to the CUDA runtime
#include "tc/CodeGen/MultiTensor.h"
#include "tc/Support/Error.h"
#include <cstring>
#include <gtest/gtest.h>

using namespace tc;

TEST(CudaLaunch, KernelTableLinesParseAndBadOnesAreErrors) {
  auto t = parseCudaKernelTable("g0 tc_g0 pointwise pointwise 256 4\n"
                                "g1 tc_g0 row-reduction rows 1024 8\n"
                                "g2 tc_g2 reduction reduce 64 1\n"
                                "g3 tc_g3 reduction columns 256 1024\n",
                                "m.tcx");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[3].launch, LaunchKind::Columns);
  EXPECT_EQ(t[2].launch, LaunchKind::Reduce);
  EXPECT_EQ(t[2].kind, KernelKind::Reduction);
  EXPECT_EQ(t[1].kind, KernelKind::RowReduction);
  EXPECT_EQ(t[1].group, "g1");
  EXPECT_EQ(t[1].symbol, "tc_g0"); // equal groups share a kernel
  EXPECT_EQ(t[1].launch, LaunchKind::Rows);
  EXPECT_EQ(t[0].vec, 4u);
  for (const char *bad :
       {"g tc_g pointwise pointwise\n", "g tc_g pointwise tiles 256 4\n",
        "g tc_g row-reduction rows 1000 8\n", "g tc_g pointwise pointwise 0 4\n", "g - - - 0 0\n",
        "g tc_g row-reduction rows 1024 8 mkl\n", "g tc_g row-reduction rows 1024 8 cudnn x\n",
        "g - - - 0 1 cudnn\n", "g tc_g tiles rows 1024 8\n", "g tc_g rows 1024 8\n",
        "g tc_g pointwise rows 1024 8\n", "g tc_g row-reduction reduce 64 1\n",
        "g tc_g pointwise columns 256 1024\n"})
    EXPECT_THROW(parseCudaKernelTable(bad, "m.tcx"), Error) << bad;
}

// The attention family's split-key kernel: a fixed grid of `vec` blocks
// with the runtime's scratch, as the reduction family's `columns`.
// The kernel-variants section (tc-codegen --tune): a key, an index, a
// name, then a kernel table line; anything else one error naming the file.
TEST(CudaLaunch, KernelVariantLinesParseAndBadOnesAreErrors) {
  std::vector<CudaKernelVariant> v = parseCudaKernelVariants(
      "reduction:00ff 0 grid=264,block=256 g tc_g reduction columns 256 264\n"
      "reduction:00ff 1 grid=528,block=256 g tc_g__v1 reduction columns 256 528\n",
      "m.tcx");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].key, "reduction:00ff");
  EXPECT_EQ(v[1].index, 1u);
  EXPECT_EQ(v[1].name, "grid=528,block=256");
  EXPECT_EQ(v[1].entry.group, "g");
  EXPECT_EQ(v[1].entry.symbol, "tc_g__v1");
  EXPECT_EQ(v[1].entry.launch, LaunchKind::Columns);
  EXPECT_EQ(v[1].entry.vec, 528u);
  for (const char *bad :
       {"k 0 n g tc_g reduction columns 256\n", "k x n g tc_g reduction columns 256 264\n",
        "k 0 n g tc_g pointwise lanes 256 4\n"}) {
    try {
      parseCudaKernelVariants(bad, "m.tcx");
      ADD_FAILURE() << bad;
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind("m.tcx: malformed", 0), 0u) << e.what();
    }
  }
  EXPECT_EQ(kernelTuningKey("reduction:00ff", {{2, 7, 40}, {2, 1, 40}, {}}),
            "kernel reduction:00ff [2,7,40] [2,1,40] []");
}

TEST(CudaLaunch, AttentionSplitKeysOverAFixedGrid) {
  auto t = parseCudaKernelTable("g tc_g attention columns 160 264\n", "m.tcx");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, KernelKind::Attention);
  EXPECT_EQ(t[0].launch, LaunchKind::Columns);
  EXPECT_TRUE(readsScratch(t[0].launch));
  auto l = launchDims(t[0], {1, 16, 1, 64});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->grid, 264u);
  EXPECT_EQ(l->block, 160u);
  for (const char *bad : {"g tc_g attention split 128 4\n", "g tc_g attention rows 128 4\n"})
    EXPECT_THROW(parseCudaKernelTable(bad, "m.tcx"), Error) << bad;
}

TEST(CudaLaunch, LanesLaunchBlockOverVecRowsPerBlock) {
  auto t = parseCudaKernelTable("g tc_g row-reduction lanes 128 8\n", "m.tcx");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].launch, LaunchKind::Lanes);
  auto l = launchDims(t[0], {5, 200, 96}); // 1000 rows, 16 a block
  ASSERT_TRUE(l);
  EXPECT_EQ(l->block, 128u);
  EXPECT_EQ(l->grid, 63u);
  EXPECT_EQ(launchDims(t[0], {3, 96})->grid, 1u);
  EXPECT_FALSE(launchDims(t[0], {0, 96}));
  // Lanes are a power of two up to a warp, and only the row-reduction family's.
  for (const char *bad : {"g tc_g row-reduction lanes 128 64\n",
                          "g tc_g row-reduction lanes 128 12\n", "g tc_g reduction lanes 128 8\n"})
    EXPECT_THROW(parseCudaKernelTable(bad, "m.tcx"), Error) << bad;
}

TEST(CudaLaunch, SplitLaunchesItsPassesOverAFixedGridWithTheScratch) {
  auto t = parseCudaKernelTable("g tc_g reduction split 256 3\n", "m.tcx");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].launch, LaunchKind::Split);
  EXPECT_TRUE(readsScratch(t[0].launch));
  for (std::vector<int64_t> domain : {std::vector<int64_t>{32, 1, 200704}, {2, 3, 65536}}) {
    auto l = launchDims(t[0], domain); // whatever the rows: the kernel splits them
    ASSERT_TRUE(l);
    EXPECT_EQ(l->grid, kSplitGrid);
    EXPECT_EQ(l->block, 256u);
    EXPECT_EQ(l->passes, 3u);
  }
  EXPECT_EQ(launchDims(CudaKernelEntry{"g", "tc_g", LaunchKind::Rows, 1024, 8, ""}, {2, 9})->passes,
            1u);
  EXPECT_THROW(parseCudaKernelTable("g tc_g row-reduction split 256 3\n", "m.tcx"), Error);
  // ScatterND by update slices (IndexMove.cpp): the data-movement family's two passes.
  auto s = parseCudaKernelTable("g tc_g data-movement split 256 2\n", "m.tcx");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].kind, KernelKind::DataMovement);
  EXPECT_EQ(launchDims(s[0], {30522, 768})->passes, 2u);
}

// Multi-tensor runs: pointwise kernels, or full `split` reductions (the
// AMP overflow check's sums, tc/CodeGen/MultiTensor.h), each member the
// blocks its own `split` launch splits its row into.
TEST(CudaLaunch, MultiTensorRunsArePointwiseOrSplitReductions) {
  auto t = parseCudaKernelTable("g0 tc_g0_mt pointwise multi-tensor 256 4\n"
                                "g1 tc_g1_mt reduction multi-tensor 256 1\n",
                                "m.tcx");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].launch, LaunchKind::MultiTensor);
  EXPECT_EQ(t[1].kind, KernelKind::Reduction);
  EXPECT_FALSE(readsScratch(t[1].launch)); // each member's is in its table entry
  for (const char *bad :
       {"g tc_g row-reduction multi-tensor 256 1\n", "g tc_g data-movement multi-tensor 256 1\n"})
    EXPECT_THROW(parseCudaKernelTable(bad, "m.tcx"), Error) << bad;
  // 16 elements a thread at least, at most the `split` grid.
  EXPECT_EQ(splitBlocks(8, 256), 1);
  EXPECT_EQ(splitBlocks(16384, 256), 4);
  EXPECT_EQ(splitBlocks(140000, 256), 35);
  EXPECT_EQ(splitBlocks(int64_t(30522) * 768, 256), int64_t(kSplitGrid));
  // A multi-tensor member: 8 times the elements a block (128 a thread).
  EXPECT_EQ(multiTensorSplitBlocks(8, 256), 1);
  EXPECT_EQ(multiTensorSplitBlocks(140000, 256), 5);
  EXPECT_EQ(multiTensorSplitBlocks(int64_t(768) * 3072, 256), 72);
  EXPECT_EQ(multiTensorSplitBlocks(int64_t(50265) * 768, 256), int64_t(kSplitGrid));
}

// The compaction family: one block, its two passes, even over an empty
// result (the count pass decides its size).
TEST(CudaLaunch, CompactionRunsOneBlockTwiceWhateverItsResult) {
  auto t = parseCudaKernelTable("g tc_g compaction compact 256 1\n", "m.tcx");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].launch, LaunchKind::Compact);
  EXPECT_FALSE(readsScratch(t[0].launch));
  for (std::vector<int64_t> domain : {std::vector<int64_t>{2, 0}, {}, {3, 1000}}) {
    auto l = launchDims(t[0], domain);
    ASSERT_TRUE(l);
    EXPECT_EQ(l->grid, 1u);
    EXPECT_EQ(l->block, 256u);
    EXPECT_EQ(l->passes, 2u);
  }
  EXPECT_THROW(parseCudaKernelTable("g tc_g pointwise compact 256 1\n", "m.tcx"), Error);
  EXPECT_THROW(parseCudaKernelTable("g tc_g compaction split 256 1\n", "m.tcx"), Error);
}

TEST(CudaLaunch, LibraryLinesNameTheLibraryAndTheEpilogueKernel) {
  auto t = parseCudaKernelTable("mm tc_mm__epilogue pointwise pointwise 256 4 cublaslt\n"
                                "conv - - - 0 0 cudnn\ng tc_g row-reduction rows 1024 8\n",
                                "m.tcx");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].library, "cublaslt");
  EXPECT_EQ(t[0].symbol, "tc_mm__epilogue");
  EXPECT_TRUE(t[0].hasKernel());
  EXPECT_EQ(t[1].library, "cudnn");
  EXPECT_FALSE(t[1].hasKernel());
  EXPECT_EQ(t[2].library, "");
}

TEST(CudaLaunch, PointwiseGridCoversTheDomainOnce) {
  CudaKernelEntry k{"g", "tc_g", LaunchKind::Pointwise, 256, 4, ""};
  auto l = launchDims(k, {3, 1000});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->block, 256u);
  EXPECT_EQ(l->grid, 3u);                 // 3000 elements, 1024 per block and step
  EXPECT_EQ(launchDims(k, {})->grid, 1u); // a scalar
  EXPECT_FALSE(launchDims(k, {0, 4}));    // nothing to launch
  // Beyond 2^31 blocks the grid-stride loop covers the rest.
  EXPECT_EQ(launchDims(k, {int64_t(1) << 42, 1024})->grid, (1u << 31) - 1);
}

TEST(CudaLaunch, RowsGetOneBlockEachOfWholeWarps) {
  CudaKernelEntry k{"g", "tc_g", LaunchKind::Rows, 1024, 8, ""};
  auto l = launchDims(k, {2, 4, 9});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->grid, 8u);
  EXPECT_EQ(l->block, 32u);
  EXPECT_EQ(launchDims(k, {16, 768})->block, 192u);
  EXPECT_EQ(launchDims(k, {1, 1 << 20})->block, 1024u);
}

TEST(CudaLaunch, ReductionsGetOneBlockPerResultElementOfTheTablesSize) {
  CudaKernelEntry k{"g", "tc_g", LaunchKind::Reduce, 64, 1, ""};
  auto l = launchDims(k, {8, 2048, 1, 1}); // a global pool's result
  ASSERT_TRUE(l);
  EXPECT_EQ(l->grid, 8u * 2048);
  EXPECT_EQ(l->block, 64u);
  EXPECT_EQ(launchDims(k, {})->grid, 1u); // everything into one value
  EXPECT_FALSE(launchDims(k, {0, 3}));
  EXPECT_EQ(launchDims(k, {int64_t(1) << 40})->grid, (1u << 31) - 1);
}

TEST(CudaLaunch, ColumnReductionsGetTheirFixedGridAndAScratchOfPartialsAndCounters) {
  CudaKernelEntry k{"g", "tc_g", LaunchKind::Columns, 256, 1024, ""};
  for (std::vector<int64_t> domain : {std::vector<int64_t>{32, 1, 1, 32}, {1}, {4096, 1280}}) {
    auto l = launchDims(k, domain); // whatever the result's size: the kernel splits its work
    ASSERT_TRUE(l);
    EXPECT_EQ(l->grid, 1024u);
    EXPECT_EQ(l->block, 256u);
    EXPECT_EQ(columnsScratchBytes(*l), 1024u * 256 * 8 + 1024 * 4);
  }
  EXPECT_FALSE(launchDims(k, {0, 32}));
}

TEST(CudaLaunch, DevicesRunTheCubinOfTheirMajorUpToTheirMinor) {
  std::vector<std::string> fat = {"sm_80", "sm_90"};
  EXPECT_EQ(pickCubinArch(fat, 9, 0), "sm_90");
  EXPECT_EQ(pickCubinArch(fat, 8, 6), "sm_80");
  EXPECT_EQ(pickCubinArch({"sm_80", "sm_86"}, 8, 9), "sm_86");
  EXPECT_FALSE(pickCubinArch(fat, 7, 5));
  EXPECT_FALSE(pickCubinArch({"sm_86"}, 8, 0));
}

TEST(CudaLaunch, ParamsArePointersThenDimsEightBytesEach) {
  // struct { void *bufs[2]; int64_t dims[3]; } as the kernel reads it.
  struct Params {
    void *bufs[2];
    int64_t dims[3];
  };
  auto p = packKernelParams({0x1000, 0x2000}, {4, -1, int64_t(1) << 40});
  ASSERT_EQ(p.size() * 8, sizeof(Params));
  Params q;
  std::memcpy(&q, p.data(), sizeof q);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q.bufs[1]), 0x2000u);
  EXPECT_EQ(q.dims[1], -1);
  EXPECT_EQ(q.dims[2], int64_t(1) << 40);
  // No dims (scalars only): the struct still has dims[1].
  EXPECT_EQ(packKernelParams({0x1000}, {}).size(), 2u);
}

// The libraries' loader (private to the CUDA runtime): a missing library is
// one error naming it and the first file tried.
TEST(CudaLaunch, AMissingLibraryIsOneErrorNamingIt) {
  try {
    cuda::openLibrary("cuBLASLt", {"libtc-missing-a.so.13", "libtc-missing-a.so"});
    FAIL() << "loaded a library that does not exist";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("cuBLASLt not found (libtc-missing-a.so.13: ", 0), 0u)
        << e.what();
  }
  void *libc = cuda::openLibrary("libc", {"libtc-missing-b.so", "libc.so.6"}); // the next name
  ASSERT_NE(libc, nullptr);
  int (*abs)(int) = nullptr;
  cuda::bindSymbol(libc, abs, "abs", "libc");
  EXPECT_EQ(abs(-3), 3);
  EXPECT_THROW(cuda::bindSymbol(libc, abs, "tc_no_such_symbol", "libc"), Error);
}
