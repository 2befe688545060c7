#include "tc/CodeGen/KernelTable.h"
#include "tc/IR/Bytecode.h"
#include "tc/IR/Parser.h"
#include "tc/Runtime/CpuModel.h"
#include "tc/Support/Error.h"
#include "tc/Target/Executable.h"
#include <gtest/gtest.h>

using namespace tc;

TEST(KernelTable, KindFieldIsAFamilyExactlyWhenThereIsAKernel) {
  std::optional<KernelKind> k;
  EXPECT_TRUE(parseKernelKindField("row-reduction", "tc_g", k));
  EXPECT_EQ(k, KernelKind::RowReduction);
  EXPECT_TRUE(parseKernelKindField("-", "-", k));
  EXPECT_FALSE(k);
  EXPECT_FALSE(parseKernelKindField("-", "tc_g", k));           // a kernel without a family
  EXPECT_FALSE(parseKernelKindField("pointwise", "-", k));      // a family without a kernel
  EXPECT_FALSE(parseKernelKindField("elementwise", "tc_g", k)); // not a family
  KernelKind pool = KernelKind::Pool;
  EXPECT_STREQ(kernelKindField(&pool), "pool");
  EXPECT_STREQ(kernelKindField(nullptr), "-");
  auto lines = splitKernelTable("a b\n\n  \nc  d e\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].fields, (std::vector<std::string>{"c", "d", "e"}));
}

namespace {

// A CPU artifact whose kernel table is `table` (no kernels behind it: the
// table is read and checked before any symbol is looked up).
std::string loadError(const std::string &table) {
  Artifact a;
  a.file = "x.tcx";
  a.target = kCpuTarget;
  a.setSection(kSectionModule, writeBytecode(*parseModule(R"(module @m {
  func @g(%x: f32[4]) -> (f32[4]) {
    %y = Cos(%x) : f32[4]
    return %y
  }
  func @main(%x: f32[4]) -> (f32[4]) {
    %y = Fused(%x) {callee = "g", kind = "pointwise"} : f32[4]
    return %y
  }
})",
                                                          "x.tcir")));
  a.setSection(kSectionKernels, table);
  try {
    CpuModel::load(readArtifact(MemoryBuffer::copy(writeArtifact(a), "x.tcx")), kCpuTarget);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(KernelTable, CpuTableLinesCarryTheKindAndBadOnesAreErrors) {
  for (const char *bad :
       {"g tc_g - - -\n", "g tc_g - - - -\n", "g tc_g tiles - - -\n", "g - pointwise onednn - -\n",
        "g - - - - -\n", "g tc_g pointwise onednn tc_e -\n", "g tc_g pointwise - - - x\n"})
    EXPECT_NE(loadError(bad).find("x.tcx: malformed CPU kernel table line"), std::string::npos)
        << bad;
  EXPECT_NE(loadError("h tc_h pointwise - - -\n").find("names group @h, which the module lacks"),
            std::string::npos);
  EXPECT_NE(loadError("g - - mkl - -\n").find("asks for library 'mkl'"), std::string::npos);
  // The library is codegen's decision; a Cos group marked oneDNN is corrupt.
  EXPECT_NE(loadError("g tc_g pointwise onednn - -\n")
                .find("@g is not a library call plus a pointwise epilogue"),
            std::string::npos);
}
